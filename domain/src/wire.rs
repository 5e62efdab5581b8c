//! `wire_enum!`: a state enum whose serde names are its wire (and stored)
//! strings, with the one mapping to and from text that the database uses.
//! It deserialises itself: a name it does not know is refused with the
//! choices ("must be a, b or c"), so a param of its type needs no check of
//! its own and its 2002 names the param (`serde_path_to_error`).

macro_rules! wire_enum {
    ($(#[$meta:meta])* pub enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $wire:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire (and stored) name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),+
                }
            }

            /// The value a wire name stands for.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// "a, b or c": the accepted names, for error messages.
            pub fn choices() -> String {
                let names: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => names.concat(),
                }
            }

            /// Why a name is refused: "must be a, b or c".
            pub fn refusal() -> String {
                format!("must be {}", Self::choices())
            }

            /// The value of param `field`, or 2002 on it; for a param read as
            /// text because another check must answer first.
            pub fn from_param(field: &str, text: &str) -> $crate::error::Result<$name> {
                Self::parse(text).ok_or_else(|| $crate::error::Error::invalid(field, Self::refusal()))
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                struct Names;
                impl serde::de::Visitor<'_> for Names {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(f, "one of {}", $name::choices())
                    }
                    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<$name, E> {
                        $name::parse(text).ok_or_else(|| E::custom($name::refusal()))
                    }
                }
                d.deserialize_str(Names)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
