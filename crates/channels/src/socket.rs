//! What the adapters on a platform's WebSocket share (Discord's gateway, Slack's Socket
//! Mode, Feishu's long connection): opening the socket, unless the adapter is stopped first,
//! and sorting what arrives on a JSON socket (Discord's, Slack's) for the read loop.

use pincer_channel_port::ChannelError;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

/// An open platform socket.
pub(crate) type WebSocket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// A message from a JSON socket, as the read loop takes it.
#[cfg(any(feature = "discord", feature = "slack"))]
pub(crate) enum Received<F> {
    /// A text frame, decoded.
    Frame(F),
    /// The platform closed the socket (with its close frame, if it sent one).
    Closed(Option<tokio_tungstenite::tungstenite::protocol::CloseFrame>),
    /// Nothing for the adapter: pings and pongs (tungstenite answers pings), binary frames,
    /// text it cannot decode (logged and skipped: one odd frame does not end a connection).
    Nothing,
}

/// What a socket's read gave (`None`: the stream ended).
#[cfg(any(feature = "discord", feature = "slack"))]
type Read =
    Option<Result<tokio_tungstenite::tungstenite::Message, tokio_tungstenite::tungstenite::Error>>;

/// Sorts what `channel`'s socket (`what`: `gateway`, `Socket Mode`) gave, decoding a text
/// frame with `decode`; any text counts as a sign of life in `sink`'s health. `Err` with the
/// connection error's text when the socket failed or ended.
#[cfg(any(feature = "discord", feature = "slack"))]
pub(crate) fn received<F, E: std::fmt::Display>(
    frame: Read,
    sink: &pincer_channel_port::InboundSink,
    (channel, what): (&str, &str),
    decode: impl FnOnce(&str) -> Result<F, E>,
) -> Result<Received<F>, String> {
    use tokio_tungstenite::tungstenite::Message as Ws;
    let body = match frame {
        Some(Ok(Ws::Text(body))) => body,
        Some(Ok(Ws::Close(frame))) => return Ok(Received::Closed(frame)),
        Some(Ok(Ws::Binary(_))) => {
            tracing::debug!("{channel}: binary {what} frame ignored");
            return Ok(Received::Nothing);
        }
        Some(Ok(_)) => return Ok(Received::Nothing),
        Some(Err(e)) => return Err(e.to_string()),
        None => return Err(format!("the {what} connection ended")),
    };
    sink.health().heard();
    match decode(body.as_str()) {
        Ok(frame) => Ok(Received::Frame(frame)),
        Err(e) => {
            tracing::warn!(error = %e, "{channel}: undecodable {what} frame ignored");
            Ok(Received::Nothing)
        }
    }
}

/// Opens `channel`'s WebSocket at `url` (`what` names it in the error); `None` when `stop`
/// comes first.
pub(crate) async fn open(
    channel: &str,
    what: &str,
    url: &str,
    stop: &CancellationToken,
) -> Result<Option<WebSocket>, ChannelError> {
    tokio::select! {
        connected = tokio_tungstenite::connect_async(url) => match connected {
            Ok((ws, _)) => Ok(Some(ws)),
            Err(e) => Err(ChannelError::Connection {
                channel: channel.into(),
                message: format!("cannot open {what}: {e}"),
            }),
        },
        () = stop.cancelled() => Ok(None),
    }
}
