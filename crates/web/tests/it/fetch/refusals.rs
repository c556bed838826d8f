//! What web_fetch refuses, through the tool: the fixture's own address without allowHosts,
//! the metadata address, other schemes and bad URLs, redirects to private addresses (naming
//! the hop), endless redirects, bad arguments; and the allowPrivateNetwork opt-out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_web::fetch::WebFetchOptions;
use pincer_web::ssrf::NetworkPolicy;
use serde_json::json;

use super::common::{call, content, details, fetch, fetch_with, options, site};

fn refusal(host: &str, what: &str) -> String {
    format!(
        "refused {host}: it is {host}, a {what} address; to allow it set \
         tools.web.fetch.allowPrivateNetwork: true or add \"{host}\" to \
         tools.web.fetch.allowHosts"
    )
}

#[tokio::test]
async fn loopback_and_metadata_are_refused_without_an_allowance() {
    let site = site().await;
    let closed = WebFetchOptions::default();
    let err = fetch_with(closed.clone(), &site.url("/article"), json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), refusal("127.0.0.1", "loopback"));
    assert_eq!(site.hits("/article"), 0);
    let err = fetch_with(closed.clone(), "http://127.0.0.1/", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), refusal("127.0.0.1", "loopback"));
    let err = fetch_with(
        closed,
        "http://169.254.169.254/latest/meta-data/",
        json!({}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "refused 169.254.169.254: it is 169.254.169.254, a cloud metadata service address; to \
         reach it anyway add \"169.254.169.254\" to tools.web.fetch.allowHosts"
    );
}

#[tokio::test]
async fn allow_private_network_opens_the_lan_but_not_metadata() {
    let site = site().await;
    let open = WebFetchOptions {
        policy: NetworkPolicy {
            allow_private_network: true,
            allow_hosts: vec![],
            ..NetworkPolicy::default()
        },
        ..WebFetchOptions::default()
    };
    let out = fetch_with(open.clone(), &site.url("/notes.txt"), json!({}))
        .await
        .unwrap();
    assert_eq!(
        content(&out),
        "Shopping list:\n- rocks\n- clams\n<b>not html</b>\n"
    );
    let err = fetch_with(open, &site.url("/to-private"), json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "refused redirect 1 to \"http://169.254.169.254/latest/meta-data/\": refused \
         169.254.169.254: it is 169.254.169.254, a cloud metadata service address; to reach it \
         anyway add \"169.254.169.254\" to tools.web.fetch.allowHosts"
    );
}

#[tokio::test]
async fn redirects_are_checked_hop_by_hop() {
    let site = site().await;
    let err = fetch(&site.url("/to-private")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "refused redirect 1 to \"http://169.254.169.254/latest/meta-data/\": refused \
         169.254.169.254: it is 169.254.169.254, a cloud metadata service address; to reach it \
         anyway add \"169.254.169.254\" to tools.web.fetch.allowHosts"
    );
    let to = |target: &str| site.url(&format!("/to?url={}", target.replace(':', "%3A")));
    let err = fetch(&to("http://10.1.2.3/admin")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "refused redirect 1 to \"http://10.1.2.3/admin\": {}",
            refusal("10.1.2.3", "private network")
        )
    );
    let err = fetch(&to("http://[::1]:9/")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "refused redirect 1 to \"http://[::1]:9/\": refused ::1: it is ::1, a loopback \
         address; to allow it set tools.web.fetch.allowPrivateNetwork: true or add \"::1\" to \
         tools.web.fetch.allowHosts"
    );
    let local = format!("http://localhost:{}/article", site.addr().port());
    let err = fetch(&to(&local)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "refused redirect 1 to \"{local}\": refused localhost: it is a local host name; to \
             allow it set tools.web.fetch.allowPrivateNetwork: true or add \"localhost\" to \
             tools.web.fetch.allowHosts"
        )
    );
    // reqwest does not follow a redirect to another scheme: the 302 is the answer.
    let from = to("file:///etc/passwd");
    let err = fetch(&from).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "web_fetch: {from} answered HTTP 302, a redirect to \"file:///etc/passwd\" that was not followed"
        )
    );
    // A second hop into the metadata service is named as hop 2.
    let via = site
        .url("/to-private")
        .replace(':', "%3A")
        .replace('/', "%2F");
    let err = fetch(&site.url(&format!("/to?url={via}")))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("refused redirect 2 to \"http://169.254.169.254/latest/meta-data/\""),
        "{err}"
    );
}

#[tokio::test]
async fn redirect_chains_stop_after_five_hops() {
    let site = site().await;
    let five = fetch(&site.url("/redirect/5")).await.unwrap();
    assert_eq!(details(&five)["finalUrl"], site.url("/article"));
    assert_eq!(details(&five)["url"], site.url("/redirect/5"));
    assert_eq!(site.hits("/article"), 1);
    let err = fetch(&site.url("/redirect/6")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "stopped after 5 redirects (the next one pointed to \"{}\")",
            site.url("/article")
        )
    );
    let err = fetch(&site.url("/loop")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "stopped after 5 redirects (the next one pointed to \"{}\")",
            site.url("/loop")
        )
    );
    assert_eq!(site.hits("/loop"), 6);
}

#[tokio::test]
async fn other_schemes_and_bad_urls_are_refused() {
    let cases = [
        (
            "file:///etc/passwd",
            "refused \"file:///etc/passwd\": only http and https URLs can be fetched, not file:",
        ),
        (
            "ftp://ftp.example.com/pub",
            "refused \"ftp://ftp.example.com/pub\": only http and https URLs can be fetched, not \
             ftp:",
        ),
        (
            "javascript:alert(1)",
            "refused \"javascript:alert(1)\": only http and https URLs can be fetched, not \
             javascript:",
        ),
        (
            "data:text/plain,hello",
            "refused \"data:text/plain,hello\": only http and https URLs can be fetched, not \
             data:",
        ),
        (
            "example.com/page",
            "invalid URL \"example.com/page\": relative URL without a base",
        ),
        ("", "invalid URL \"\": relative URL without a base"),
        (
            "http://exa mple.com/",
            "invalid URL \"http://exa mple.com/\": invalid international domain name",
        ),
        (
            "https://user:secret@example.com/",
            "refused \"https://user:secret@example.com/\": URLs with a user name or password are \
             not fetched",
        ),
    ];
    for (url, message) in cases {
        let err = fetch_with(options(), url, json!({})).await.unwrap_err();
        assert_eq!(err.to_string(), message, "{url}");
    }
}

#[tokio::test]
async fn a_space_after_the_scheme_is_forgiven() {
    let site = site().await;
    let spaced = site.url("/notes.txt").replace("http://", "http:// ");
    let out = fetch(&format!("  {spaced} ")).await.unwrap();
    assert_eq!(details(&out)["url"], site.url("/notes.txt"));
}

#[tokio::test]
async fn arguments_are_checked() {
    let tool = pincer_web::fetch::web_fetch_tool(options());
    let err = call(
        &tool,
        json!({"url": "https://example.com", "extractMode": "html"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("invalid arguments for web_fetch: "),
        "{err}"
    );
    assert!(err.contains("html"), "{err}");
    let err = call(&tool, json!({"url": "https://example.com", "headers": {}}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `headers`"), "{err}");
    let err = call(&tool, json!({})).await.unwrap_err().to_string();
    assert!(err.contains("missing field `url`"), "{err}");
    let err = call(&tool, json!({"url": "https://example.com", "maxChars": -5}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("invalid arguments for web_fetch: "),
        "{err}"
    );
}

#[test]
fn the_schema_names_openclaws_parameters() {
    let tool = pincer_web::fetch::web_fetch_tool(options());
    assert_eq!(tool.name(), "web_fetch");
    let schema = tool.parameters();
    let props = schema["properties"].as_object().unwrap();
    let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["extractMode", "maxChars", "url"]);
    assert_eq!(schema["required"], json!(["url"]));
    assert_eq!(props["maxChars"]["minimum"], json!(100));
}
