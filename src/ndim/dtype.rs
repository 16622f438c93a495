//! NumPy dtype strings, as python-blosc2 stores them in the b2nd metalayer: `dtype.str`
//! (`<f8`, `|u1`, `<U10`, `|S5`, `<M8[ns]`, `|V16`) or, for structured dtypes, `str(dtype)`:
//! a Python literal list of `(name, format[, shape])` tuples, or a dict with `names`,
//! `formats`, `offsets` and `itemsize`. Only the item size is derived; the string is kept.

use crate::error::{Error, Result};

/// The item size of a NumPy dtype string.
pub fn itemsize(dtype: &str) -> Result<usize> {
    let s = dtype.trim();
    let bad = || Error::invalid(format_args!("dtype {dtype:?} is not a NumPy dtype string"));
    if s.starts_with('[') || s.starts_with('{') || s.starts_with('(') {
        let v = Parser::new(s).parse_all().map_err(|_| bad())?;
        return structured_size(&v).ok_or_else(bad);
    }
    simple_itemsize(s).ok_or_else(bad)
}

/// A field of a structured dtype: its name, its simple format ("<f8") and how many items of
/// that format it holds (a subarray field holds more than one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub format: String,
    pub count: usize,
}

/// The fields of a structured dtype in list form whose fields all have simple formats (laid
/// out one after the other, as that form is); `None` for any other dtype.
pub fn simple_fields(dtype: &str) -> Option<Vec<Field>> {
    let s = dtype.trim();
    if !s.starts_with('[') {
        return None;
    }
    let Lit::List(fields) = Parser::new(s).parse_all().ok()? else {
        return None;
    };
    fields
        .iter()
        .map(|f| {
            let (name, format, count) = list_field(f)?;
            let Lit::Str(format) = format else {
                return None;
            };
            simple_itemsize(format)?;
            Some(Field {
                name: name.to_string(),
                format: format.clone(),
                count,
            })
        })
        .collect()
}

/// Item size of a simple dtype like "<f8", "i4", "|S10", "<U3", "<M8[ns]".
pub fn simple_itemsize(s: &str) -> Option<usize> {
    let s = s.strip_prefix(['<', '>', '|', '=']).unwrap_or(s);
    let mut chars = s.chars();
    let kind = chars.next()?;
    let rest = chars.as_str();
    let (num, unit) = match rest.find('[') {
        Some(i) if rest.ends_with(']') => (&rest[..i], Some(&rest[i + 1..rest.len() - 1])),
        Some(_) => return None,
        None => (rest, None),
    };
    let n: usize = if num.is_empty() {
        match kind {
            '?' | 'b' | 'B' => 1,
            _ => return None,
        }
    } else {
        num.parse().ok()?
    };
    match (kind, unit) {
        ('M' | 'm', Some(u))
            if n == 8 && !u.is_empty() && u.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            Some(8)
        }
        ('M' | 'm', None) if n == 8 => Some(8),
        ('U', None) => n.checked_mul(4),
        ('b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'a' | 'V' | '?', None)
            if n > 0 || kind == 'S' || kind == 'V' =>
        {
            Some(n)
        }
        _ => None,
    }
    .filter(|&n| n > 0)
}

/// A parsed Python literal.
#[derive(Debug, Clone)]
enum Lit {
    Str(String),
    Int(i64),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

fn structured_size(v: &Lit) -> Option<usize> {
    match v {
        Lit::List(fields) => {
            let mut total = 0usize;
            for f in fields {
                let (_, fmt, count) = list_field(f)?;
                let size = field_size(fmt)?.checked_mul(count)?;
                total = total.checked_add(size)?;
            }
            (total > 0).then_some(total)
        }
        Lit::Dict(entries) => {
            let get = |k: &str| {
                entries
                    .iter()
                    .find(|(key, _)| matches!(key, Lit::Str(s) if s == k))
                    .map(|(_, v)| v)
            };
            if let Some(Lit::Int(n)) = get("itemsize") {
                return usize::try_from(*n).ok().filter(|&n| n > 0);
            }
            let Some(Lit::List(formats)) = get("formats") else {
                return None;
            };
            formats
                .iter()
                .try_fold(0usize, |acc, f| acc.checked_add(field_size(f)?))
        }
        _ => None,
    }
}

/// A field of a list-form structured dtype, `(name, format[, shape])`: its name, format and
/// the number of items its shape holds (1 without one).
fn list_field(f: &Lit) -> Option<(&str, &Lit, usize)> {
    let Lit::List(parts) = f else { return None };
    let (name, fmt, shape) = match parts.as_slice() {
        [Lit::Str(n), fmt] => (n, fmt, None),
        [Lit::Str(n), fmt, shape] => (n, fmt, Some(shape)),
        _ => return None,
    };
    let dims: Vec<i64> = match shape {
        None => vec![],
        Some(Lit::Int(n)) => vec![*n],
        Some(Lit::List(d)) => d
            .iter()
            .map(|x| if let Lit::Int(n) = x { Some(*n) } else { None })
            .collect::<Option<_>>()?,
        Some(_) => return None,
    };
    let count = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))?;
    Some((name, fmt, count))
}

fn field_size(fmt: &Lit) -> Option<usize> {
    match fmt {
        Lit::Str(s) => simple_itemsize(s),
        nested @ (Lit::List(_) | Lit::Dict(_)) => structured_size(nested),
        Lit::Int(_) => None,
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        Parser {
            s: s.as_bytes(),
            pos: 0,
            depth: 0,
        }
    }

    fn parse_all(mut self) -> std::result::Result<Lit, ()> {
        let v = self.value()?;
        self.ws();
        if self.pos != self.s.len() {
            return Err(());
        }
        Ok(v)
    }

    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> std::result::Result<Lit, ()> {
        self.ws();
        self.depth += 1;
        if self.depth > 32 {
            return Err(()); // deeply nested literals are refused, not recursed into
        }
        let c = *self.s.get(self.pos).ok_or(())?;
        let v = match c {
            b'[' | b'(' => {
                let close = if c == b'[' { b']' } else { b')' };
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.s.get(self.pos) == Some(&close) {
                        self.pos += 1;
                        break;
                    }
                    items.push(self.value()?);
                    self.ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(&x) if x == close => {}
                        _ => return Err(()),
                    }
                }
                Lit::List(items)
            }
            b'{' => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.s.get(self.pos) == Some(&b'}') {
                        self.pos += 1;
                        break;
                    }
                    let k = self.value()?;
                    self.ws();
                    if self.s.get(self.pos) != Some(&b':') {
                        return Err(());
                    }
                    self.pos += 1;
                    let v = self.value()?;
                    items.push((k, v));
                    self.ws();
                    match self.s.get(self.pos) {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(()),
                    }
                }
                Lit::Dict(items)
            }
            b'\'' | b'"' => {
                self.pos += 1;
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos] != c {
                    self.pos += if self.s[self.pos] == b'\\' { 2 } else { 1 };
                }
                if self.pos >= self.s.len() {
                    return Err(());
                }
                let text = std::str::from_utf8(&self.s[start..self.pos])
                    .map_err(|_| ())?
                    .to_string();
                self.pos += 1;
                Lit::Str(text)
            }
            b'-' | b'0'..=b'9' => {
                let start = self.pos;
                self.pos += 1;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.pos]).map_err(|_| ())?;
                Lit::Int(t.parse().map_err(|_| ())?)
            }
            _ => {
                // Bare words (None, True, False) only matter as values we do not use.
                let start = self.pos;
                while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphabetic() {
                    self.pos += 1;
                }
                if start == self.pos {
                    return Err(());
                }
                Lit::Str(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
            }
        };
        self.depth -= 1;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::itemsize;

    #[test]
    fn simple_dtypes() {
        for (d, n) in [
            ("<f8", 8),
            ("|u1", 1),
            ("<i4", 4),
            (">f4", 4),
            ("|b1", 1),
            ("<c16", 16),
            ("<U10", 40),
            ("|S5", 5),
            ("<M8[ns]", 8),
            ("<m8[s]", 8),
            ("|V16", 16),
            ("?", 1),
            ("f8", 8),
        ] {
            assert_eq!(itemsize(d).unwrap(), n, "{d}");
        }
    }

    #[test]
    fn structured_dtypes() {
        assert_eq!(itemsize("[('a', '<i4'), ('b', '<f8')]").unwrap(), 12);
        assert_eq!(
            itemsize("[('x', '<f4', (2, 3)), ('y', '|u1')]").unwrap(),
            25
        );
        assert_eq!(
            itemsize("[('n', [('p', '<i2'), ('q', '<i2')]), ('s', '|S3')]").unwrap(),
            7
        );
        assert_eq!(
            itemsize("{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [0, 8], 'itemsize': 16}").unwrap(),
            16
        );
    }

    #[test]
    fn bad_dtypes() {
        for d in ["", "<", "<x8", "<f", "<U0", "[('a')]", "[('a', '<i4'),", "<M8[", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['a', '<i4']]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"] {
            assert!(itemsize(d).is_err(), "{d:?} accepted");
        }
    }
}
