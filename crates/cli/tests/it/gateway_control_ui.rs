//! `pincer gateway run` and OpenClaw's Control UI: `--control-ui <dir>` and
//! `gateway.controlUi.root` (with `~/`) serve the directory at `/control/`, the flag wins
//! over the config, a directory without `index.html` stops the start with a message saying
//! what to point it at, and without either `/control/` says how to turn it on. The files
//! are stand-ins written by the test (never OpenClaw's).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use crate::common::Home;
use crate::common::gateway::Foreground;

/// Writes a stand-in app into `dir`: an index naming `title`, and one asset.
fn write_app(dir: &Path, title: &str) {
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("index.html"),
        format!("<html><head><title>{title}</title><script src=\"./assets/app.js\"></script></head></html>"),
    )
    .unwrap();
    std::fs::write(dir.join("assets/app.js"), "export {};").unwrap();
}

/// `GET path`: the status code and the body.
fn get(port: u16, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

fn home_with(extra: &str) -> Home {
    let home = Home::new();
    home.write_config(&format!(
        "{{ gateway: {{ auth: {{ token: \"t\" }}{extra} }} }}"
    ));
    home
}

/// `pincer gateway run` on a free port with `--control-ui <app>`.
fn serving_control_ui(home: &Home, app: &Path) -> Foreground {
    Foreground::start(
        home,
        &[
            "gateway",
            "run",
            "--port",
            "0",
            "--control-ui",
            app.to_str().unwrap(),
        ],
    )
}

#[test]
fn the_flag_serves_the_directory_at_control() {
    let home = home_with("");
    let app = home.dir.path().join("openclaw/dist/control-ui");
    write_app(&app, "from the flag");
    let gateway = serving_control_ui(&home, &app);
    let (status, body) = get(gateway.port, "/control/");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        "<html data-openclaw-control-ui-base-path=\"/control\" \
         data-openclaw-terminal-enabled=\"false\"><head><title>from the flag</title>\
         <script src=\"/control/assets/app.js\"></script></head></html>"
    );
    assert_eq!(
        get(gateway.port, "/control/assets/app.js"),
        (200, "export {};".to_owned())
    );
    // The web chat page at `/` is still there.
    assert_eq!(get(gateway.port, "/").0, 200);
}

#[test]
fn the_config_root_is_served_with_the_home_expanded_and_the_flag_wins() {
    let home = home_with(", controlUi: { root: \"~/apps/ui\" }");
    // `HOME` of the commands the harness runs is `<tmp>/user`.
    write_app(&home.dir.path().join("user/apps/ui"), "from the config");
    let gateway = Foreground::start(&home, &["gateway", "run", "--port", "0"]);
    let (status, body) = get(gateway.port, "/control/chat/main");
    assert_eq!(status, 200);
    assert!(body.contains("<title>from the config</title>"), "{body}");
    drop(gateway);

    let other = home.dir.path().join("other");
    write_app(&other, "from the flag");
    let gateway = serving_control_ui(&home, &other);
    let (_, body) = get(gateway.port, "/control/");
    assert!(body.contains("<title>from the flag</title>"), "{body}");
}

#[test]
fn a_directory_without_the_app_stops_the_start() {
    let home = home_with("");
    let empty = home.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let run = home.run(&[
        "gateway",
        "run",
        "--port",
        "0",
        "--control-ui",
        empty.to_str().unwrap(),
    ]);
    run.assert_fails(
        1,
        &format!(
            "--control-ui: {} has no index.html; point it at an installed openclaw package's \
             dist/control-ui directory",
            empty.display()
        ),
    );
    let home = home_with(", controlUi: { root: \"/nonexistent/control-ui\" }");
    let run = home.run(&["gateway", "run", "--port", "0"]);
    run.assert_fails(
        1,
        "gateway.controlUi.root: /nonexistent/control-ui has no index.html",
    );
}

#[test]
fn without_a_root_control_says_how_to_turn_it_on() {
    let home = home_with("");
    let gateway = Foreground::start(&home, &["gateway", "run", "--port", "0"]);
    let (status, body) = get(gateway.port, "/control/");
    assert_eq!(status, 404);
    assert!(
        body.starts_with("The Control UI is not enabled on this gateway."),
        "{body}"
    );
    assert!(body.contains("gateway.controlUi.root"), "{body}");
    assert!(body.contains("--control-ui <dir>"), "{body}");
}

#[test]
fn the_daemon_serves_the_flag_s_directory_resolved_where_start_ran() {
    let home = home_with("");
    write_app(&home.dir.path().join("apps/ui"), "from the daemon");
    let _guard = crate::common::gateway::DaemonGuard::new(&home);
    let start = |dir: &str| {
        home.command(&[
            "gateway",
            "start",
            "--daemon",
            "--port",
            "0",
            "--control-ui",
            dir,
        ])
        .current_dir(home.dir.path())
        .output()
        .unwrap()
    };
    // A relative directory: the daemon does not run where `start` ran.
    let started = start("apps/ui");
    assert!(started.status.success(), "{started:?}");
    let status = crate::common::gateway::status_json(&home);
    let port = status["port"].as_u64().unwrap() as u16;
    let (code, body) = get(port, "/control/");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("<title>from the daemon</title>"), "{body}");
    home.run_ok(&["gateway", "stop"]);

    // A wrong directory is refused before anything is started.
    let run = crate::common::Run(start("/nope"));
    run.assert_fails(1, "--control-ui: /nope has no index.html");
    assert_eq!(crate::common::gateway::status_json(&home)["running"], false);
}
