//! The public face every fake shares, written once: the cheap-to-clone handle that stops
//! the server when its last clone is dropped, its bind error, `start` / `start_with`
//! (panicking) / `stop` / `addr`, `Debug` and the config getters; the record and counter
//! getters and their waits; and the config builders' setters and the injected messages'
//! optional text fields. Each fake writes its own `try_start_with` and what only it does.

/// `fake_handle!(/// docs  FakeX(ConfigType, InnerType), FakeXError, "fake x"; getters:
/// field, …)`: the handle struct `FakeX` over a [`super::Server`], its error, the shared
/// methods and a getter per named text field of its configuration (a copy). A fake always
/// has both, so one invocation declares them.
macro_rules! fake_handle {
    (
        $(#[$doc:meta])*
        $name:ident($config:ty, $inner:ty), $error:ident, $label:literal;
        getters: $($field:ident),+ $(,)?
    ) => {
        /// Why the fake could not start.
        #[derive(Debug, thiserror::Error)]
        pub enum $error {
            #[error("cannot bind {addr}: {source}")]
            Bind {
                addr: std::net::SocketAddr,
                source: std::io::Error,
            },
        }

        impl From<(std::net::SocketAddr, std::io::Error)> for $error {
            fn from((addr, source): (std::net::SocketAddr, std::io::Error)) -> Self {
                Self::Bind { addr, source }
            }
        }

        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name {
            running: std::sync::Arc<crate::fake_support::Server<$config, $inner>>,
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.running.debug(stringify!($name), f)
            }
        }

        impl $name {
            /// Serves the default configuration on `127.0.0.1` with a free port.
            ///
            /// # Panics
            /// If no loopback port can be bound (`try_start_with` says why instead).
            pub async fn start() -> Self {
                Self::start_with(<$config>::default()).await
            }

            /// Serves `config`.
            ///
            /// # Panics
            /// If `config.addr` cannot be bound (`try_start_with` says why instead).
            pub async fn start_with(config: $config) -> Self {
                match Self::try_start_with(config).await {
                    Ok(fake) => fake,
                    Err(err) => panic!("{}: {err}", $label),
                }
            }

            fn from_server(server: crate::fake_support::Server<$config, $inner>) -> Self {
                Self {
                    running: std::sync::Arc::new(server),
                }
            }

            fn shared(&self) -> &std::sync::Arc<crate::fake_support::Host<$config, $inner>> {
                &self.running.host
            }

            /// The bound address.
            pub fn addr(&self) -> std::net::SocketAddr {
                self.running.addr
            }

            /// Stops serving (also while other clones are alive): open connections are
            /// dropped, waits and long polls end.
            pub fn stop(&self) {
                self.running.stop();
            }

            $(
                // `field@`: the config's builder method of the same name would win otherwise.
                #[doc = concat!(
                    "The configured [`", stringify!($field), "`](field@",
                    stringify!($config), "::", stringify!($field), ")."
                )]
                pub fn $field(&self) -> String {
                    self.shared().config.$field.clone()
                }
            )+
        }
    };
}

/// `records!(FakeX { /// docs  getter / wait_for_getter => field: Type; … })`: for each
/// record of the fake's state, a getter (a copy, oldest first) and, when named, a wait for
/// at least `n` of them (returning all of them, fewer on a timeout).
macro_rules! records {
    ($name:ident { $($(#[$doc:meta])* $get:ident $(/ $wait:ident)? => $field:ident: $item:ty;)+ }) => {
        impl $name {
            $(
                $(#[$doc])*
                pub fn $get(&self) -> Vec<$item> {
                    self.shared().read(|inner| inner.$field.clone())
                }

                $(
                    #[doc = concat!(
                        "Waits until [`", stringify!($name), "::", stringify!($get),
                        "`] holds at least `n` or `timeout` passed; returns them all."
                    )]
                    pub async fn $wait(
                        &self,
                        n: usize,
                        timeout: std::time::Duration,
                    ) -> Vec<$item> {
                        self.shared().wait_len(n, timeout, |inner| &inner.$field).await
                    }
                )?
            )+
        }
    };
}

/// `counters!(FakeX { /// docs  getter / wait_for_getter => field; … })`: for each counter
/// of the fake's state, a getter and, when named, a wait until it reaches `n` (returning
/// the count then, lower on a timeout).
macro_rules! counters {
    ($name:ident { $($(#[$doc:meta])* $get:ident $(/ $wait:ident)? => $field:ident;)+ }) => {
        impl $name {
            $(
                $(#[$doc])*
                pub fn $get(&self) -> usize {
                    self.shared().read(|inner| inner.$field)
                }

                $(
                    #[doc = concat!(
                        "Waits until [`", stringify!($name), "::", stringify!($get),
                        "`] reaches `n` or `timeout` passed; returns the count then."
                    )]
                    pub async fn $wait(&self, n: usize, timeout: std::time::Duration) -> usize {
                        self.shared().wait_count(n, timeout, |inner| inner.$field).await
                    }
                )?
            )+
        }
    };
}

/// `setters!(FakeXConfig { text: a, b; plain: n: u64, addr: SocketAddr })`: a builder
/// method per field — `impl Into<String>` for the `text` ones, the field's type for the
/// `plain` ones.
macro_rules! setters {
    ($config:ident { text: $($text:ident),*; plain: $($plain:ident: $ty:ty),* $(,)? }) => {
        impl $config {
            $(
                pub fn $text(mut self, value: impl Into<String>) -> Self {
                    self.$text = value.into();
                    self
                }
            )*
            $(
                pub fn $plain(mut self, value: $ty) -> Self {
                    self.$plain = value;
                    self
                }
            )*
        }
    };
}

/// `some_setters!(Type { method => field, … })`: builder methods for optional text fields,
/// `method(value: impl Into<String>)` setting `field` to `Some(value)`.
macro_rules! some_setters {
    ($ty:ident { $($method:ident => $field:ident),+ $(,)? }) => {
        impl $ty {
            $(
                pub fn $method(mut self, value: impl Into<String>) -> Self {
                    self.$field = Some(value.into());
                    self
                }
            )+
        }
    };
}

pub(crate) use {counters, fake_handle, records, setters, some_setters};
