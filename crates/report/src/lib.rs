//! volley-report
