//! Host facts and run-time environment (CPU model, kernel, governor, THP, load).
// STUB: replaced by the real implementation.

use crate::model::{EnvInfo, HostInfo};

/// Facts about this host.
pub fn host_info() -> HostInfo {
    HostInfo::default()
}

/// Conditions right now.
pub fn env_info() -> EnvInfo {
    EnvInfo::default()
}
