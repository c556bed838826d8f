//! Helpers the auth test modules share.

/// Asserts that `result` is an error saying `message`; the error, for further checks.
pub fn assert_fails<T: std::fmt::Debug, E: std::fmt::Display>(
    result: Result<T, E>,
    message: &str,
) -> E {
    match result {
        Ok(value) => panic!("expected the error {message:?}, got {value:?}"),
        Err(error) => {
            assert_eq!(error.to_string(), message);
            error
        }
    }
}
