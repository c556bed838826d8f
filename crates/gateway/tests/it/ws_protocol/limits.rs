//! The pre-auth limits through `ServeOptions`: a connection over the per-peer cap of
//! pending ones is refused with a Close saying why, a connection that passes `connect`
//! frees its place at once, and the 64 KiB budget of the handshake is lifted afterwards.

use super::*;

/// The next message that is not a ping or pong; `None` at the end.
async fn next_message(client: &mut Client) -> Option<Ws> {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), client.ws.next())
            .await
            .expect("a message within 10 s")
        {
            Some(Ok(Ws::Ping(_) | Ws::Pong(_))) => {}
            Some(Ok(message)) => return Some(message),
            Some(Err(_)) | None => return None,
        }
    }
}

async fn connect_params(client: &mut Client) -> Value {
    client
        .call(
            "connect",
            json!({"minProtocol": 4, "maxProtocol": 4,
                   "client": {"id": "test", "version": "1", "platform": "linux", "mode": "test"},
                   "auth": {"token": TOKEN}, "role": "operator", "scopes": ["operator.read"]}),
        )
        .await
}

#[tokio::test]
async fn pending_connections_past_the_cap_are_refused_until_one_connects() {
    let server = start_with_preauth(2, 10).await;
    let (mut first, challenge) = Client::raw(&server.url).await;
    assert_eq!(challenge["event"], "connect.challenge");
    let (_second, _) = Client::raw(&server.url).await;

    let (ws, _) = connect_async(&server.url).await.unwrap();
    let mut third = Client { ws, next: 0 };
    match next_message(&mut third).await {
        Some(Ws::Close(Some(frame))) => {
            assert_eq!(u16::from(frame.code), 1013);
            assert_eq!(
                frame.reason.as_str(),
                "too many unauthenticated connections from this address; send connect first"
            );
        }
        other => panic!("expected a Close, got {other:?}"),
    }
    assert!(next_message(&mut third).await.is_none());

    // The first one connects: its place is free by the time it has `hello-ok`.
    let hello = connect_params(&mut first).await;
    assert_eq!(hello["ok"], true, "{hello}");
    let (_fourth, challenge) = Client::raw(&server.url).await;
    assert_eq!(challenge["event"], "connect.challenge");
}

#[tokio::test]
async fn after_connect_requests_may_be_larger_than_the_pre_auth_budget() {
    let server = start(hi_scenario()).await;
    let (mut client, hello) = Client::connect(&server.url, &["operator.read"]).await;
    assert_eq!(hello["ok"], true, "{hello}");
    // 1 MiB, sixteen times the pre-auth budget, in one request.
    let padding = "x".repeat(1024 * 1024);
    let answer = client.call("health", json!({"padding": padding})).await;
    assert_eq!(answer["type"], "res", "{answer}");
    assert_eq!(client.call("health", json!({})).await["ok"], true);
}
