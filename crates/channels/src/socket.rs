//! What the adapters on a platform's WebSocket share (Discord's gateway, Slack's Socket
//! Mode, Feishu's long connection): opening the socket, unless the adapter is stopped first.

use pincer_channel_port::ChannelError;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

/// An open platform socket.
pub(crate) type WebSocket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

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
