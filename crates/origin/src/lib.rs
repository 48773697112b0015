//! volley-origin
