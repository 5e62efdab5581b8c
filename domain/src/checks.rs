//! Collects field errors so one response can name every bad field at once.

use super::error::{Error, FieldError};

#[derive(Default)]
pub struct Checks(Vec<FieldError>);

impl Checks {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn check(&mut self, ok: bool, field: &str, message: &str) -> &mut Self {
        if !ok {
            self.0.push(FieldError {
                field: field.to_owned(),
                message: message.to_owned(),
            });
        }
        self
    }

    pub fn finish(&mut self) -> Result<(), Error> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(std::mem::take(&mut self.0)))
        }
    }
}

pub fn char_len_between(s: &str, min: usize, max: usize) -> bool {
    let n = s.chars().count();
    (min..=max).contains(&n)
}

/// Lower-cases and trims an address; accepts the practical shape
/// `local@domain.tld` without trying to implement RFC 5322.
pub fn normalize_email(raw: &str) -> Result<String, Error> {
    let email = raw.trim().to_lowercase();
    let ok = email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && match email.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.contains('@')
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
            }
            None => false,
        };
    if ok {
        Ok(email)
    } else {
        Err(Error::invalid("email", "must be an email address"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        assert_eq!(normalize_email(" A@B.io ").unwrap(), "a@b.io");
        for bad in ["", "a", "a@b", "@b.io", "a@@b.io", "a b@c.io", "a@.io"] {
            assert!(normalize_email(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn checks_collect_every_failure() {
        let err = Checks::new()
            .check(false, "a", "x")
            .check(true, "b", "y")
            .check(false, "c", "z")
            .finish()
            .unwrap_err();
        match err {
            Error::Validation(v) => assert_eq!(v.len(), 2),
            other => panic!("{other:?}"),
        }
    }
}
