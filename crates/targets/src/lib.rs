//! volley-targets
