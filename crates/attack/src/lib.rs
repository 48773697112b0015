//! volley-attack
