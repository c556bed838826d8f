//! The scenario types' builder methods, written once: most of them set one optional field
//! (or make a value with only that field set), and writing each out by hand made dozens of
//! three-line functions that differ only in their names.

/// `builder!(Type { /// docs  KIND name(field: [into] T); … })` adds to `Type`, per entry:
/// - `set name(field: T)`: `fn name(self, field: T) -> Self` setting `field` to `Some(field)`;
/// - `new name(field: T)`: `fn name(field: T) -> Self`, the default with only `field` set;
/// - `new name(field)`: `fn name() -> Self`, the default with the flag `field` set to `true`.
///
/// `into T` takes `impl Into<T>`.
macro_rules! builder {
    ($ty:ident { $($(#[$doc:meta])* $kind:ident $name:ident($($spec:tt)+);)+ }) => {
        impl $ty {
            $(
                $crate::scenario::builder::builder!(@item $kind [$(#[$doc])*] $name $($spec)+);
            )+
        }
    };
    (@item set [$(#[$doc:meta])*] $name:ident $field:ident: into $t:ty) => {
        $(#[$doc])*
        pub fn $name(mut self, $field: impl Into<$t>) -> Self {
            self.$field = Some($field.into());
            self
        }
    };
    (@item set [$(#[$doc:meta])*] $name:ident $field:ident: $t:ty) => {
        $(#[$doc])*
        pub fn $name(mut self, $field: $t) -> Self {
            self.$field = Some($field);
            self
        }
    };
    (@item new [$(#[$doc:meta])*] $name:ident $field:ident: into $t:ty) => {
        $(#[$doc])*
        pub fn $name($field: impl Into<$t>) -> Self {
            Self {
                $field: Some($field.into()),
                ..Self::default()
            }
        }
    };
    (@item new [$(#[$doc:meta])*] $name:ident $field:ident: $t:ty) => {
        $(#[$doc])*
        pub fn $name($field: $t) -> Self {
            Self {
                $field: Some($field),
                ..Self::default()
            }
        }
    };
    (@item new [$(#[$doc:meta])*] $name:ident $field:ident) => {
        $(#[$doc])*
        pub fn $name() -> Self {
            Self {
                $field: true,
                ..Self::default()
            }
        }
    };
}

pub(crate) use builder;
