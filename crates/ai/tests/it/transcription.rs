//! Speech to text against the mock's `/v1/audio/transcriptions`: the multipart request
//! carries the model, the file and the key, the answer's text comes back trimmed, and a
//! refusal or an unreachable service is an error that says which.

use std::time::Duration;

use pincer_ai::transcription::{Transcriber, TranscriptionEndpoint, TranscriptionError};
use pincer_testkit::{Api, MockLlm, Scenario};

fn endpoint(base_url: String, api_key: Option<&str>) -> TranscriptionEndpoint {
    TranscriptionEndpoint {
        base_url,
        model: "whisper-1".into(),
        api_key: api_key.map(str::to_owned),
        timeout: Duration::from_secs(10),
    }
}

#[tokio::test]
async fn a_voice_note_comes_back_as_text() {
    let mock = MockLlm::start(Scenario::new()).await.unwrap();
    let transcriber = Transcriber::new(endpoint(mock.base_url(Api::OpenAiCompletions), Some("k")));
    let text = transcriber
        .transcribe("note.ogg", "audio/ogg", b"OggS voice")
        .await
        .unwrap();
    assert_eq!(text, "mock transcript of note.ogg (10 bytes, whisper-1)");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/audio/transcriptions");
    assert_eq!(request.header("authorization"), Some("Bearer k"));
    let body = request.body.as_str().unwrap();
    assert!(
        body.contains("name=\"response_format\"\r\n\r\njson\r\n"),
        "{body}"
    );
    assert!(
        body.contains("filename=\"note.ogg\"\r\nContent-Type: audio/ogg\r\n\r\nOggS voice\r\n"),
        "{body}"
    );
}

#[tokio::test]
async fn a_refusal_and_an_unreachable_service_are_told_apart() {
    let mock = MockLlm::start(Scenario::new()).await.unwrap();
    let without_key = Transcriber::new(endpoint(mock.base_url(Api::OpenAiCompletions), None));
    let refused = without_key.transcribe("a.ogg", "audio/ogg", b"x").await;
    match refused {
        Err(TranscriptionError::Refused { status, body }) => {
            assert_eq!(status, 401);
            assert!(body.contains("missing bearer token"), "{body}");
        }
        other => panic!("{other:?}"),
    }
    // A port nothing listens on.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let down = Transcriber::new(endpoint(format!("http://127.0.0.1:{port}/v1"), Some("k")));
    let err = down
        .transcribe("a.ogg", "audio/ogg", b"x")
        .await
        .unwrap_err();
    assert!(matches!(err, TranscriptionError::Unreachable(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("the transcription service could not be reached: "),
        "{err}"
    );
}
