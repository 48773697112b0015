//! Raw command-line flags, parsed the way vegeta's users type them.
//!
//! Every subcommand declares its flags as a table of [`Spec`]s; [`parse`]
//! turns `argv` into [`Raw`] values without interpreting them. Accepted
//! spellings: `-rate=5000`, `-rate 5000`, `--rate 5000`, `--rate=5000`. A
//! boolean flag is set by `-http2`, `-http2=false`, and — because the seed
//! reports write it that way — `-http2 false` (a following literal `true` or
//! `false` is taken as the flag's value). Validation into typed settings
//! happens afterwards, in each subcommand's module (two-stage configuration).

use std::collections::HashMap;
use std::fmt;

/// How a flag takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `-flag`, `-flag=true|false`, `-flag true|false`.
    Bool,
    /// `-flag value`; the last one wins.
    Value,
    /// `-flag value`, repeatable; all are kept in order.
    Repeated,
}

/// One flag of a subcommand.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub name: &'static str,
    pub kind: Kind,
    /// Default shown in help (the settings stage applies it).
    pub default: &'static str,
    pub help: &'static str,
}

impl Spec {
    pub const fn new(
        name: &'static str,
        kind: Kind,
        default: &'static str,
        help: &'static str,
    ) -> Spec {
        Spec {
            name,
            kind,
            default,
            help,
        }
    }
}

/// A flag error, displayed as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagError {
    Unknown(String),
    MissingValue(String),
    BadBool(String, String),
    Invalid(String, String),
    Help,
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagError::Unknown(n) => write!(f, "unknown flag -{n} (see -h)"),
            FlagError::MissingValue(n) => write!(f, "flag -{n} needs a value"),
            FlagError::BadBool(n, v) => {
                write!(f, "flag -{n}: {v:?} is not a boolean (want true or false)")
            }
            FlagError::Invalid(n, why) => write!(f, "flag -{n}: {why}"),
            FlagError::Help => write!(f, "help requested"),
        }
    }
}

impl std::error::Error for FlagError {}

/// Parsed but uninterpreted flags plus positional arguments.
#[derive(Debug, Default, Clone)]
pub struct Raw {
    values: HashMap<&'static str, Vec<String>>,
    pub positional: Vec<String>,
}

impl Raw {
    /// The last value given for a flag.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Every value given for a repeatable flag, in order.
    pub fn values(&self, name: &str) -> &[String] {
        self.values.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether the flag was given at all.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// A boolean flag's value, or `default` when it was not given.
    pub fn bool(&self, name: &str, default: bool) -> bool {
        self.value(name).map(|v| v == "true").unwrap_or(default)
    }

    /// A typed value through `parse`, naming the flag in the error.
    pub fn parsed<T, E: fmt::Display>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, E>,
    ) -> Result<Option<T>, FlagError> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => parse(v)
                .map(Some)
                .map_err(|e| FlagError::Invalid(name.to_string(), e.to_string())),
        }
    }
}

fn parse_bool(name: &str, v: &str) -> Result<String, FlagError> {
    match v {
        "true" | "1" | "t" | "T" | "TRUE" | "True" => Ok("true".into()),
        "false" | "0" | "f" | "F" | "FALSE" | "False" => Ok("false".into()),
        _ => Err(FlagError::BadBool(name.into(), v.into())),
    }
}

/// Parses `args` (without the program and subcommand names) against `specs`.
/// `--` ends flags; everything after it is positional.
pub fn parse(specs: &[Spec], args: &[String]) -> Result<Raw, FlagError> {
    let mut raw = Raw::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            raw.positional.extend(args[i..].iter().cloned());
            break;
        }
        let Some(body) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            raw.positional.push(arg.clone());
            continue;
        };
        if body.is_empty() {
            // A lone "-" means stdin, as a positional argument.
            raw.positional.push(arg.clone());
            continue;
        }
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if name == "h" || name == "help" {
            return Err(FlagError::Help);
        }
        let spec = specs
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| FlagError::Unknown(name.to_string()))?;
        let value = match (spec.kind, inline) {
            (Kind::Bool, Some(v)) => parse_bool(name, &v)?,
            (Kind::Bool, None) => match args.get(i).map(String::as_str) {
                Some(v @ ("true" | "false")) => {
                    i += 1;
                    v.to_string()
                }
                _ => "true".to_string(),
            },
            (_, Some(v)) => v,
            (_, None) => {
                let v = args
                    .get(i)
                    .ok_or_else(|| FlagError::MissingValue(name.to_string()))?;
                i += 1;
                v.clone()
            }
        };
        let slot = raw.values.entry(spec.name).or_default();
        if spec.kind != Kind::Repeated {
            slot.clear();
        }
        slot.push(value);
    }
    Ok(raw)
}

/// Renders a subcommand's help text from its specs.
pub fn help(usage: &str, specs: &[Spec]) -> String {
    let mut out =
        format!("{usage}\n\nFlags (-flag=value, -flag value and --flag value are all accepted):\n");
    for s in specs {
        let arg = match s.kind {
            Kind::Bool => String::new(),
            _ => " value".to_string(),
        };
        let def = if s.default.is_empty() {
            String::new()
        } else {
            format!(" (default {})", s.default)
        };
        let rep = if s.kind == Kind::Repeated {
            " [repeatable]"
        } else {
            ""
        };
        out.push_str(&format!(
            "  -{}{arg}\n        {}{def}{rep}\n",
            s.name, s.help
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[Spec] = &[
        Spec::new("rate", Kind::Value, "50/1s", ""),
        Spec::new("http2", Kind::Bool, "true", ""),
        Spec::new("insecure", Kind::Bool, "false", ""),
        Spec::new("header", Kind::Repeated, "", ""),
    ];

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_spelling_of_a_value_flag() {
        for a in ["-rate=5000", "-rate 5000", "--rate 5000", "--rate=5000"] {
            let raw = parse(SPECS, &args(a)).unwrap();
            assert_eq!(raw.value("rate"), Some("5000"), "{a}");
        }
    }

    #[test]
    fn bool_flags_take_a_following_true_or_false() {
        let raw = parse(SPECS, &args("-http2 false x.bin")).unwrap();
        assert!(!raw.bool("http2", true));
        assert_eq!(raw.positional, vec!["x.bin"]);
        let raw = parse(SPECS, &args("-http2=false")).unwrap();
        assert!(!raw.bool("http2", true));
        let raw = parse(SPECS, &args("-insecure x.bin")).unwrap();
        assert!(raw.bool("insecure", false));
        assert_eq!(raw.positional, vec!["x.bin"]);
        assert_eq!(
            parse(SPECS, &args("-insecure=maybe")).unwrap_err(),
            FlagError::BadBool("insecure".into(), "maybe".into())
        );
    }

    #[test]
    fn repeated_flags_keep_order_and_last_value_wins() {
        let raw = parse(SPECS, &args("-header A:1 -header=B:2 -rate 1 -rate 2")).unwrap();
        assert_eq!(raw.values("header"), ["A:1", "B:2"]);
        assert_eq!(raw.value("rate"), Some("2"));
    }

    #[test]
    fn unknown_and_missing_values_are_one_line_errors() {
        let e = parse(SPECS, &args("-nope 1")).unwrap_err();
        assert_eq!(e.to_string(), "unknown flag -nope (see -h)");
        let e = parse(SPECS, &args("-rate")).unwrap_err();
        assert_eq!(e.to_string(), "flag -rate needs a value");
    }

    #[test]
    fn dash_and_double_dash_are_positional() {
        let raw = parse(SPECS, &args("- -- -rate")).unwrap();
        assert_eq!(raw.positional, vec!["-", "-rate"]);
    }
}
