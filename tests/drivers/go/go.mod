// Driver smoke suite for pgx (see main_test.go), run by
// crates/tusk/tests/drivers_java_go.rs as `go test -count=1 ./...`.
module tusk.test/drivers/go

go 1.23.0

require github.com/jackc/pgx/v5 v5.7.6

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	golang.org/x/crypto v0.37.0 // indirect
	golang.org/x/text v0.24.0 // indirect
)
