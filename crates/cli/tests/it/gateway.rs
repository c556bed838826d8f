//! `pincer gateway`: the foreground server, the daemon's lifecycle (start, status, stop),
//! the token file and the refusals (taken port, no auth off loopback), through the real
//! binary. Every test picks free ports, and a guard kills whatever it started, so no
//! gateway outlives a test, even a failing one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::gateway::*;
use common::{Home, mode};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

#[test]
fn foreground_serves_readyz_and_exits_0_on_sigterm_and_sigint() {
    let home = Home::new();
    let mut gateway = Foreground::start(&home, &["gateway", "--port", "0"]);
    assert_eq!(
        http_status(gateway.port, "/readyz").as_deref(),
        Some("HTTP/1.1 200 OK")
    );
    // First start: the token is generated and shown once.
    let token = read_token(&home);
    assert!(is_token(&token), "{token:?}");
    assert!(
        gateway
            .preamble
            .iter()
            .any(|l| l == &format!("Your gateway token: {token}")),
        "{:?}",
        gateway.preamble
    );
    gateway.signal(Signal::SIGTERM);
    assert_eq!(gateway.wait().code(), Some(0), "{}", gateway.stderr());
    gateway.assert_stderr_has(&["listening"]);
    assert!(!gateway.stderr().contains(&token));

    // `run` spelled out, Ctrl-C; the token is not announced again.
    let mut gateway = Foreground::start(&home, &["gateway", "run", "--port", "0"]);
    assert!(gateway.preamble.is_empty(), "{:?}", gateway.preamble);
    assert!(http_status(gateway.port, "/readyz").is_some());
    gateway.signal(Signal::SIGINT);
    assert_eq!(gateway.wait().code(), Some(0), "{}", gateway.stderr());
    assert_eq!(read_token(&home), token);
}

#[test]
fn daemon_start_status_refusal_stop() {
    let home = Home::new();
    let _guard = DaemonGuard::new(&home);
    let started = home.run_ok(&["gateway", "start", "--daemon", "--port", "0"]);
    let out = started.stdout();
    let pid: u32 = out
        .lines()
        .find_map(|l| l.strip_prefix("gateway service started as daemon: pid="))
        .unwrap_or_else(|| panic!("{out}"))
        .parse()
        .unwrap();
    let state_path = home.path().join("service/gateway.json");
    let log_path = home.path().join("logs/gateway.log");
    assert!(
        out.contains(&format!("status: {}", state_path.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!("log: {}", log_path.display())),
        "{out}"
    );
    assert_eq!(mode(&state_path), 0o600);
    assert_eq!(mode(&log_path), 0o600);

    let status = status_json(&home);
    assert_eq!(status["status"], "running", "{status}");
    assert_eq!(status["running"], true);
    assert_eq!(status["pid"], pid);
    let port = status["port"].as_u64().unwrap() as u16;
    assert!(status["startedAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(status["statePath"], state_path.to_str().unwrap());
    assert_eq!(status["logPath"], log_path.to_str().unwrap());
    assert!(status["command"].as_str().unwrap().ends_with("pincer"));
    assert_eq!(status["argv"][1], "gateway");
    assert_eq!(
        http_status(port, "/readyz").as_deref(),
        Some("HTTP/1.1 200 OK")
    );

    // A second daemon, or a foreground gateway on its port, is refused naming the pid.
    let again = home.run(&["gateway", "start", "--daemon", "--port", "0"]);
    again.assert_fails(1, &format!("pid {pid}"));
    assert!(again.stderr().contains("pincer gateway stop"));
    let taken = home.run(&["gateway", "run", "--port", &port.to_string()]);
    taken.assert_fails(1, &format!("port {port} is in use"));
    taken.assert_stderr_has(&[&format!("pid {pid}")]);

    // It has no terminal: a stray SIGHUP does not end it.
    kill(Pid::from_raw(pid as i32), Signal::SIGHUP).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(status_json(&home)["running"], true);

    let stopped = home.run_ok(&["gateway", "stop"]);
    assert_eq!(
        stopped.stdout().trim(),
        format!("gateway service stopped (pid={pid})")
    );
    assert!(!alive(pid), "pid {pid} still alive after stop");
    assert!(!state_path.exists());
    let status = status_json(&home);
    assert_eq!(status["status"], "stopped", "{status}");
    assert_eq!(status["running"], false);
    assert!(status["pid"].is_null());
    let again = home.run_ok(&["gateway", "stop"]);
    assert_eq!(again.stdout().trim(), "gateway service already stopped");

    // The daemon logged its start and stop, and never the token.
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("listening"), "{log}");
    assert!(log.contains("stopped"), "{log}");
    assert!(log.contains("SIGHUP ignored"), "{log}");
    assert!(!log.contains(&read_token(&home)), "{log}");
}

#[test]
fn a_taken_port_is_refused_with_exit_code_1() {
    let home = Home::new();
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port().to_string();
    for args in [
        vec!["gateway", "--port", &port],
        vec!["gateway", "start", "--daemon", "--port", &port],
    ] {
        let run = home.run(&args);
        assert_eq!(run.code(), 1, "{args:?}: {}", run.stderr());
        run.assert_stderr_has(&[
            &format!("port {port} on 127.0.0.1 is already in use"),
            "--port",
        ]);
    }
    assert!(!home.path().join("service/gateway.json").exists());
    // PINCER_GATEWAY_PORT is the port when --port is not given.
    let run = home
        .with_env("PINCER_GATEWAY_PORT", &port)
        .run(&["gateway"]);
    run.assert_fails(1, &format!("port {port}"));
}

#[test]
fn the_token_is_created_once_private_and_stable_and_the_environment_wins() {
    let home = Home::new();
    let first = home.run_ok(&["gateway", "token"]);
    let token = first.stdout().trim().to_owned();
    assert!(is_token(&token), "{token:?}");
    let path = home.path().join("gateway-token");
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&home.path()), 0o700);
    assert_eq!(home.run(&["gateway", "token"]).stdout().trim(), token);

    // A gateway started later uses it and does not announce a new one.
    let gateway = Foreground::start(&home, &["gateway", "--port", "0"]);
    assert!(gateway.preamble.is_empty(), "{:?}", gateway.preamble);
    drop(gateway);
    assert_eq!(read_token(&home), token);

    // A file others can read is tightened.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(home.run(&["gateway", "token"]).stdout().trim(), token);
    assert_eq!(mode(&path), 0o600);

    // PINCER_GATEWAY_TOKEN overrides the file, and no file is created for it.
    let other = Home::new().with_env("PINCER_GATEWAY_TOKEN", "from-the-environment");
    let run = other.run_ok(&["gateway", "token"]);
    assert_eq!(run.stdout().trim(), "from-the-environment");
    let gateway = Foreground::start(&other, &["gateway", "--port", "0"]);
    assert!(gateway.preamble.is_empty(), "{:?}", gateway.preamble);
    assert!(!other.path().join("gateway-token").exists());
}

#[test]
fn no_auth_is_allowed_on_loopback_only() {
    let home = Home::new();
    for args in [
        vec!["gateway", "--bind", "lan", "--auth", "none", "--port", "0"],
        vec![
            "gateway", "run", "--bind", "0.0.0.0", "--auth", "none", "--port", "0",
        ],
        vec![
            "gateway", "start", "--daemon", "--bind", "lan", "--auth", "none", "--port", "0",
        ],
    ] {
        let run = home.run(&args);
        assert_eq!(run.code(), 1, "{args:?}: {}", run.stderr());
        run.assert_stderr_has(&[
            "refusing to listen on 0.0.0.0 with --auth none",
            "--bind loopback",
        ]);
    }
    assert!(!home.path().join("service/gateway.json").exists());
    assert!(!home.path().join("gateway-token").exists());

    let run = home.run(&["gateway", "--bind", "nowhere"]);
    run.assert_fails(2, "loopback, lan or an IP address");

    // On loopback, --auth none serves (and needs no token file).
    let mut gateway = Foreground::start(&home, &["gateway", "--auth", "none", "--port", "0"]);
    assert!(http_status(gateway.port, "/readyz").is_some());
    gateway.signal(Signal::SIGTERM);
    assert_eq!(gateway.wait().code(), Some(0));
    assert!(!home.path().join("gateway-token").exists());
}

#[test]
fn a_stale_service_file_means_stopped_and_its_pid_is_never_signalled() {
    let home = Home::new();
    let state_path = home.path().join("service/gateway.json");
    std::fs::create_dir_all(state_path.parent().unwrap()).unwrap();
    // A pid that is alive but is not a gateway: this test process.
    let write = |pid: u32| {
        std::fs::write(
            &state_path,
            format!(
                r#"{{"pid":{pid},"port":1,"bind":"loopback","startedAt":"2026-01-01T00:00:00.000Z",
                "logPath":"x","statePath":"y","command":"pincer","argv":["pincer"]}}"#
            ),
        )
        .unwrap()
    };
    write(std::process::id());
    let status = status_json(&home);
    assert_eq!(status["status"], "stopped", "{status}");
    assert!(status["pid"].is_null());
    assert_eq!(status["port"], 1);
    let stop = home.run_ok(&["gateway", "stop"]);
    assert_eq!(stop.stdout().trim(), "gateway service already stopped");
    assert!(!state_path.exists());

    // A corrupt file is reported and does not block a start.
    std::fs::write(&state_path, "{not json").unwrap();
    let status = home.run_ok(&["gateway", "status"]);
    status.assert_stderr_has(&["not a valid service file"]);
    let _guard = DaemonGuard::new(&home);
    home.run(&["gateway", "start", "--daemon", "--port", "0"])
        .assert_ok();
    assert_eq!(status_json(&home)["running"], true);
    home.run(&["gateway", "stop"]).assert_ok();
}

#[test]
fn gateway_log_file_is_under_home() {
    // The path every message points users to.
    let home = Home::new();
    let status = status_json(&home);
    assert_eq!(
        Path::new(status["logPath"].as_str().unwrap()),
        home.path().join("logs/gateway.log")
    );
}
