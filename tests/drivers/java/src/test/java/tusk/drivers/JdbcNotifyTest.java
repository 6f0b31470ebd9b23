// LISTEN/NOTIFY through pgjdbc: PGConnection.getNotifications(timeout) waits
// on the socket of an idle listener and returns what other sessions
// committed, once per distinct payload of a transaction, with the sender's
// process id. Expected values are PostgreSQL 15's; see Db for where the
// server is.
package tusk.drivers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

class JdbcNotifyTest {

    @Test
    void listenNotify() throws SQLException {
        try (Connection listener = Db.connect(); Connection sender = Db.connect()) {
            Db.exec(listener, "LISTEN java_channel");
            int senderPid = sender.unwrap(PGConnection.class).getBackendPID();
            sender.setAutoCommit(false);
            try (PreparedStatement ps = sender.prepareStatement("SELECT pg_notify('java_channel', ?)")) {
                for (String payload : new String[] {"one", "two", "one"}) {
                    ps.setString(1, payload);
                    ps.execute();
                }
            }
            sender.commit();
            Db.exec(sender, "NOTIFY java_channel, 'rolled back'");
            sender.rollback();
            sender.setAutoCommit(true);
            Db.exec(sender, "NOTIFY java_channel, 'three'");

            PGConnection pg = listener.unwrap(PGConnection.class);
            List<String> got = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 30_000;
            while (got.size() < 3 && System.currentTimeMillis() < deadline) {
                PGNotification[] notes = pg.getNotifications(1000);
                if (notes == null) {
                    continue;
                }
                for (PGNotification n : notes) {
                    assertEquals("java_channel", n.getName());
                    assertEquals(senderPid, n.getPID());
                    got.add(n.getParameter());
                }
            }
            assertEquals(List.of("one", "two", "three"), got);

            try (Statement st = listener.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_listening_channels()")) {
                List<String> channels = new ArrayList<>();
                while (rs.next()) {
                    channels.add(rs.getString(1));
                }
                assertEquals(List.of("java_channel"), channels);
            }
            Db.exec(listener, "UNLISTEN *");
        }
    }
}
