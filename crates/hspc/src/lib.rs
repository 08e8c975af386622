//! hspc: a high-speed single-producer/single-consumer channel whose buffers,
//! padding and wait strategy are tuned per machine.
#![deny(missing_docs)]
