//! volley-plot
