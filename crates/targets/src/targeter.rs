//! Reading targets: lazily ([`TargetReader`]), eagerly ([`read_all`]), and
//! the [`Targeter`] the attack engine asks for the next target.
//!
//! Eager (the default): read everything first, fail before the attack on
//! any bad target or an empty input, then hand the targets out round-robin
//! forever. Lazy (`-lazy`): decode one target per request from the stream;
//! the attack ends at the end of input (as vegeta's lazy targeter does). Each
//! target is an `Arc<Target>`, so workers share it without copying.

use std::io::BufRead;
use std::sync::Arc;

use crate::lines::Lines;
use crate::target::{Defaults, Format, Target, TargetError};
use crate::{http_format, json_format};

/// Decodes targets one at a time from a reader.
#[derive(Debug)]
pub struct TargetReader<R> {
    lines: Lines<R>,
    format: Format,
    defaults: Defaults,
}

impl<R: BufRead> TargetReader<R> {
    /// A reader of `format` targets, with `-header`/`-body` defaults.
    pub fn new(reader: R, format: Format, defaults: Defaults) -> TargetReader<R> {
        TargetReader {
            lines: Lines::new(reader),
            format,
            defaults,
        }
    }

    /// The next target, or `None` at the end of input. After an error the
    /// reader resumes at the line after the bad one (or, after an I/O
    /// error, reports the end of input); callers normally stop.
    pub fn next_target(&mut self) -> Result<Option<Target>, TargetError> {
        match self.format {
            Format::Http => http_format::next_target(&mut self.lines, &self.defaults),
            Format::Json => json_format::next_target(&mut self.lines, &self.defaults),
        }
    }
}

impl<R: BufRead> Iterator for TargetReader<R> {
    type Item = Result<Target, TargetError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_target().transpose()
    }
}

/// Reads every target, failing on the first bad one, or if there are none
/// (`targets: no targets to attack`).
pub fn read_all<R: BufRead>(
    reader: R,
    format: Format,
    defaults: &Defaults,
) -> Result<Vec<Arc<Target>>, TargetError> {
    let targets = TargetReader::new(reader, format, defaults.clone())
        .map(|t| t.map(Arc::new))
        .collect::<Result<Vec<_>, _>>()?;
    if targets.is_empty() {
        return Err(TargetError::no_targets());
    }
    Ok(targets)
}

/// Everything a [`Targeter`] holds: drains a lazy one to its end, or
/// returns an eager one's list. Fails like [`read_all`].
pub fn read_all_from(targeter: Targeter) -> Result<Vec<Arc<Target>>, TargetError> {
    match targeter.inner {
        Inner::Eager { targets, .. } => Ok(targets.to_vec()),
        Inner::Lazy(reader) => {
            let targets = reader
                .map(|t| t.map(Arc::new))
                .collect::<Result<Vec<_>, _>>()?;
            if targets.is_empty() {
                return Err(TargetError::no_targets());
            }
            Ok(targets)
        }
    }
}

/// Hands out the next target: round-robin over an eager list (forever), or
/// decoded on demand from a stream (until it ends).
///
/// `next` takes `&mut self`: one task (the pacer) owns it, or it sits
/// behind a mutex. It is `Send`.
pub struct Targeter {
    inner: Inner,
}

enum Inner {
    Eager {
        targets: Arc<[Arc<Target>]>,
        next: usize,
    },
    Lazy(TargetReader<Box<dyn BufRead + Send>>),
}

impl std::fmt::Debug for Targeter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Eager { targets, next } => f
                .debug_struct("Targeter::Eager")
                .field("targets", &targets.len())
                .field("next", next)
                .finish(),
            Inner::Lazy(r) => f
                .debug_struct("Targeter::Lazy")
                .field("format", &r.format)
                .field("line", &r.lines.number())
                .finish(),
        }
    }
}

impl Targeter {
    /// Round-robin over `targets`; fails if there are none.
    pub fn eager(targets: Vec<Arc<Target>>) -> Result<Targeter, TargetError> {
        if targets.is_empty() {
            return Err(TargetError::no_targets());
        }
        Ok(Targeter {
            inner: Inner::Eager {
                targets: targets.into(),
                next: 0,
            },
        })
    }

    /// Reads all of `reader` now and round-robins over it.
    pub fn read_eager<R: BufRead>(
        reader: R,
        format: Format,
        defaults: &Defaults,
    ) -> Result<Targeter, TargetError> {
        Targeter::eager(read_all(reader, format, defaults)?)
    }

    /// Decodes targets from `reader` on demand (`-lazy`).
    pub fn lazy(reader: Box<dyn BufRead + Send>, format: Format, defaults: Defaults) -> Targeter {
        Targeter {
            inner: Inner::Lazy(TargetReader::new(reader, format, defaults)),
        }
    }

    /// Whether targets are decoded on demand.
    pub fn is_lazy(&self) -> bool {
        matches!(self.inner, Inner::Lazy(_))
    }

    /// The eager list (`None` when lazy).
    pub fn targets(&self) -> Option<&[Arc<Target>]> {
        match &self.inner {
            Inner::Eager { targets, .. } => Some(targets),
            Inner::Lazy(_) => None,
        }
    }

    /// The next target: eager ones cycle forever; lazy ones end with
    /// `Ok(None)` at the end of input. A lazy reader may block on its
    /// input: from async code, call it off the runtime's worker threads
    /// (e.g. `spawn_blocking`) if the input is a pipe.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Arc<Target>>, TargetError> {
        match &mut self.inner {
            Inner::Eager { targets, next } => {
                let target = targets.get(*next).cloned();
                *next = (*next + 1) % targets.len().max(1);
                Ok(target)
            }
            Inner::Lazy(reader) => Ok(reader.next_target()?.map(Arc::new)),
        }
    }
}
