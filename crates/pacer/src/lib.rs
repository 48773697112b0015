//! volley-pacer
