//! A small command-line parser: positional arguments and `--name [value]` options, each
//! command declaring which options it takes and which of them carry a value.

use std::collections::HashMap;

use crate::CliError;

/// One option a command accepts.
pub struct Opt {
    pub name: &'static str,
    pub takes_value: bool,
}

pub const fn flag(name: &'static str) -> Opt {
    Opt {
        name,
        takes_value: false,
    }
}

pub const fn value(name: &'static str) -> Opt {
    Opt {
        name,
        takes_value: true,
    }
}

/// Parsed arguments of one command.
#[derive(Debug, Default)]
pub struct Args {
    pub positional: Vec<String>,
    values: HashMap<&'static str, Vec<String>>,
}

impl Args {
    /// Parses `argv`; `None` when `--help` was asked for.
    pub fn parse(argv: &[String], opts: &[Opt]) -> Result<Option<Args>, CliError> {
        let mut a = Args::default();
        let mut it = argv.iter();
        let mut only_positional = false;
        while let Some(arg) = it.next() {
            if only_positional || !arg.starts_with("--") || arg == "-" {
                if arg == "-h" && !only_positional {
                    return Ok(None);
                }
                a.positional.push(arg.clone());
                continue;
            }
            if arg == "--" {
                only_positional = true;
                continue;
            }
            if arg == "--help" {
                return Ok(None);
            }
            let (name, inline) = match arg[2..].split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (&arg[2..], None),
            };
            let opt = opts
                .iter()
                .find(|o| o.name == name)
                .ok_or_else(|| CliError::usage(format!("unknown option --{name}")))?;
            let v = if opt.takes_value {
                match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| CliError::usage(format!("--{name} needs a value")))?,
                }
            } else if inline.is_some() {
                return Err(CliError::usage(format!("--{name} takes no value")));
            } else {
                String::new()
            };
            a.values.entry(opt.name).or_default().push(v);
        }
        Ok(Some(a))
    }

    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The last value given for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Every value given for a repeatable option.
    pub fn all(&self, name: &str) -> &[String] {
        self.values.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// A numeric option, with `default` when absent.
    pub fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, CliError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| CliError::usage(format!("--{name}: {v:?} is not a valid number"))),
        }
    }

    /// Exactly `n` positional arguments, named in `what` for the message.
    pub fn expect(&self, what: &[&str]) -> Result<(), CliError> {
        if self.positional.len() != what.len() {
            return Err(CliError::usage(format!(
                "expected {} argument{} ({}), got {}",
                what.len(),
                if what.len() == 1 { "" } else { "s" },
                what.join(" "),
                self.positional.len()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_and_positionals() {
        let opts = [value("codec"), flag("sparse"), value("filter")];
        let a = Args::parse(
            &argv("in out --codec=zstd --sparse --filter shuffle --filter delta"),
            &opts,
        )
        .unwrap()
        .unwrap();
        assert_eq!(a.positional, ["in", "out"]);
        assert_eq!(a.get("codec"), Some("zstd"));
        assert!(a.has("sparse"));
        assert_eq!(a.all("filter"), ["shuffle", "delta"]);
        assert!(Args::parse(&argv("--nope"), &opts).is_err());
        assert!(Args::parse(&argv("--codec"), &opts).is_err());
        assert!(Args::parse(&argv("x --help"), &opts).unwrap().is_none());
        let a = Args::parse(&argv("-- --sparse"), &opts).unwrap().unwrap();
        assert_eq!(a.positional, ["--sparse"]);
    }
}
