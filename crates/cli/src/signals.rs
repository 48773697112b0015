//! Ctrl-C and SIGTERM: the first stops sending (in-flight requests finish
//! and every result is written); the second exits at once after flushing
//! what the output thread already has.

use volley_attack::Stopper;

/// Waits for SIGINT/SIGTERM and stops the attack; exits on the second.
pub async fn stop_on_signal(stopper: Stopper) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
    eprintln!("volley: stopping: waiting for in-flight requests (again to quit now)");
    stopper.stop();
    tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
    std::process::exit(130);
}
