//! PLACEHOLDER
use crate::datum::Datum;
use crate::oid::Oid;
#[derive(Clone, Debug)]
pub struct Array { pub element_type: Oid, pub dims: Vec<(i32, i32)>, pub elements: Vec<Datum> }
impl PartialEq for Array { fn eq(&self, o: &Self) -> bool { self.cmp(o) == std::cmp::Ordering::Equal } }
impl Eq for Array {}
impl PartialOrd for Array { fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> { Some(self.cmp(o)) } }
impl Ord for Array { fn cmp(&self, o: &Self) -> std::cmp::Ordering { for (a,b) in self.elements.iter().zip(o.elements.iter()) { let c = a.cmp_same_type(b); if c != std::cmp::Ordering::Equal { return c; } } self.elements.len().cmp(&o.elements.len()) } }
impl std::hash::Hash for Array { fn hash<H: std::hash::Hasher>(&self, h: &mut H) { for e in &self.elements { e.hash_into(h) } } }
