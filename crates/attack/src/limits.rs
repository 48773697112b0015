//! Generator-side limits: the open-files limit is raised to its hard
//! maximum at start, so that a high rate or many users fail on the target's
//! limits, not on a default soft limit of 1024.

/// Raises RLIMIT_NOFILE's soft limit to the hard limit. Returns the new soft
/// limit (or the old one when it could not be raised).
pub fn raise_nofile() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(_) => rlimit::getrlimit(rlimit::Resource::NOFILE)
            .map(|(soft, _)| soft)
            .unwrap_or(0),
    }
}
