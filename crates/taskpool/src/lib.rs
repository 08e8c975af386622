//! taskpool: a pool of reusable OS threads that runs SVP-style families.
#![deny(missing_docs)]
