//! The allowlist checker against the real shells: command lines generated from a grammar
//! biased towards shell metacharacters (and seeded with the known bypasses) go through
//! `allowlist::check` with `echo`, `true` and `printf` allowed, and every line it admits
//! runs under `sh` and under `bash` with `PATH` set to a directory of shims: one script per
//! program name the grammar can produce, where each non-allowed one leaves a marker file.
//! No marker may appear, and neither shell may report a command it could not find (a
//! program that is not even in the shim directory). The lines also go through the fuzz
//! target's check (`fuzz/checks/exec_allowlist.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

#[path = "../../../../fuzz/checks/exec_allowlist.rs"]
mod fuzz_check;

/// Program names the grammar produces that are not allowed.
const FORBIDDEN: [&str; 10] = ["touch", "id", "rm", "cat", "x", "ls", "sh", "env", "a", "b"];

/// The bypasses found in review (finding 1 of issue 17) and their relatives.
const SEEDS: [&str; 12] = [
    "echo ${x:-{} ; touch ~/PWNED ; id #}",
    "echo ${x:-'}'}\ntouch ~/PWNED\necho '",
    "echo ${x:-\"}\"}\ntouch ~/PWNED\necho \"",
    "echo ${x:-\\}} ; touch PWNED ; echo",
    "echo ${x-{}};id;#}",
    "echo \"${x:-{}\" ; id ; echo \"}\"",
    "printf -v 'a[$(touch PWNED)]' x",
    "x='a[$(touch PWNED)]'; printf -v \"$x\" y",
    "echo {a,b}; {touch,PWNED}",
    "echo a\\\n;id",
    "echo $\\\n(id)",
    "echo ${x@P}",
];

/// Fragments a line is made of.
const FRAGMENTS: &[&str] = &[
    "echo",
    "true",
    "printf",
    "touch",
    "id",
    "rm",
    "cat",
    "x",
    "ls",
    "sh -c id",
    "env id",
    " ",
    " ",
    " ",
    "\t",
    "\n",
    ";",
    ";;",
    "&",
    "&&",
    "|",
    "||",
    "|&",
    "#",
    "# ",
    "'",
    "'",
    "\"",
    "\"",
    "\\",
    "\\\n",
    "`",
    "$",
    "$(",
    "$((",
    "(",
    ")",
    "${",
    "${x",
    "${x:-",
    "${x-",
    "${#x}",
    "${x}",
    "$x",
    "$1",
    "$#",
    "${x#",
    "${x:",
    "${x@P}",
    "${!x}",
    "$'",
    "$\"",
    "$[",
    "{",
    "}",
    "{a,b}",
    "!",
    "=",
    "x=",
    "PATH=",
    "IFS=",
    "*",
    "?",
    "~",
    "[",
    "]",
    "-v",
    "a[",
    ">",
    "<",
    ">>",
    ">|",
    "<>",
    "&>",
    ">&",
    "2>&1",
    ">/dev/null",
    "<<",
    "<(",
    "PWNED",
    "a",
    "b",
    "%",
    "\x0b",
    "\r",
    "é",
    ":",
    "-",
    "+",
    "/",
];

/// Fragments that keep a line admissible, so that many lines reach the shells.
const BENIGN: &[&str] = &[
    " echo ",
    " true ",
    " printf ",
    " ",
    " ",
    "a",
    "b",
    " -v ",
    " x=a ",
    "$x",
    "${x}",
    "${x:-a}",
    "${x#a}",
    "${#x}",
    "'a b'",
    "'}'",
    "'{'",
    "\"}\"",
    "\"$x\"",
    "\"${x-b}\"",
    "; echo ",
    "\necho ",
    " && true ",
    " | echo ",
    " 2>&1",
    " >/dev/null",
    " # c $(id)",
    " \\\n",
    "\\;",
    "\\}",
    "a#b",
    " '$(id)' ",
];

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        10 => proptest::sample::select(BENIGN).prop_map(str::to_owned),
        8 => proptest::sample::select(FRAGMENTS).prop_map(str::to_owned),
        1 => proptest::sample::select(&SEEDS[..]).prop_map(str::to_owned),
        1 => "[a-z ]{1,4}",
    ]
}

/// An allowed program first (so more lines get past the checker), then fragments.
fn line() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(&["echo ", "true ", "printf ", "echo", ""][..]),
        prop::collection::vec(fragment(), 1..10),
    )
        .prop_map(|(head, rest)| format!("{head}{}", rest.concat()))
}

struct Shells {
    _dir: tempfile::TempDir,
    shims: PathBuf,
    markers: PathBuf,
    work: PathBuf,
    shells: Vec<PathBuf>,
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}

impl Shells {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let shims = dir.path().join("shims");
        let markers = dir.path().join("markers");
        let work = dir.path().join("work");
        for d in [&shims, &markers, &work] {
            std::fs::create_dir(d).unwrap();
        }
        let write = |name: &str, body: String| {
            let path = shims.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        for name in fuzz_check::ALLOWED {
            write(name, "exit 0".to_owned());
        }
        for name in FORBIDDEN {
            write(name, format!(": > '{}/{name}'", markers.display()));
        }
        // `sh` is a bash on some systems and a dash on others: run both that exist.
        let mut shells: Vec<PathBuf> = ["/bin/sh"].iter().map(PathBuf::from).collect();
        shells.extend(which("dash"));
        shells.extend(which("bash"));
        // `/bin/sh` is often one of the others: run each binary once.
        shells.sort_by_key(|s| std::fs::canonicalize(s).unwrap_or_else(|_| s.clone()));
        shells.dedup_by_key(|s| std::fs::canonicalize(&*s).unwrap_or_else(|_| s.clone()));
        assert!(shells.iter().any(|s| s.ends_with("bash")), "bash is needed");
        Self {
            _dir: dir,
            shims,
            markers,
            work,
            shells,
        }
    }

    /// Run `line` under every shell; the markers left and the "not found" complaints.
    fn run(&self, line: &str) -> Vec<String> {
        let mut found = Vec::new();
        for shell in &self.shells {
            let mut child = Command::new(shell)
                .arg("-c")
                .arg(line)
                .env_clear()
                .env("PATH", &self.shims)
                .env("HOME", &self.work)
                .current_dir(&self.work)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .unwrap();
            let mut stderr = String::new();
            let mut pipe = child.stderr.take().unwrap();
            // A line that never ends (none should) must not hang the suite.
            let deadline = Instant::now() + Duration::from_secs(10);
            let reader = std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = pipe.read_to_end(&mut buf);
                buf
            });
            loop {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                if Instant::now() > deadline {
                    let _ = nix_kill_group(child.id());
                    let _ = child.wait();
                    found.push(format!("{} never finished", shell.display()));
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            stderr.push_str(&String::from_utf8_lossy(&reader.join().unwrap()));
            for entry in std::fs::read_dir(&self.markers).unwrap() {
                let entry = entry.unwrap();
                found.push(format!(
                    "{} ran {}",
                    shell.display(),
                    entry.file_name().to_string_lossy()
                ));
                std::fs::remove_file(entry.path()).unwrap();
            }
            for complaint in stderr.lines().filter(|l| is_not_found(l)) {
                found.push(format!("{}: {complaint}", shell.display()));
            }
        }
        found
    }
}

/// `sh: 1: foo: not found` (dash), `bash: line 1: foo: command not found` (bash),
/// `bash: line 1: ./foo: No such file or directory`.
fn is_not_found(line: &str) -> bool {
    (line.contains(": not found") && !line.contains("command not found"))
        || line.ends_with(": command not found")
        || (line.starts_with("bash: line ") && line.ends_with(": No such file or directory"))
}

fn nix_kill_group(pid: u32) -> nix::Result<()> {
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
}

/// Whether `line` was admitted (and then ran only allowed programs).
fn assert_contained(shells: &Shells, line: &str) -> Result<bool, TestCaseError> {
    if !fuzz_check::check(line) {
        return Ok(false);
    }
    let ran = shells.run(line);
    prop_assert!(
        ran.is_empty(),
        "the allowlist admitted {line:?}, which ran non-allowed programs: {ran:?}"
    );
    Ok(true)
}

#[test]
fn the_known_bypasses_are_refused() {
    let shells = Shells::new();
    for seed in SEEDS {
        assert!(
            pincer_tools::exec::allowlist::check(seed, &fuzz_check::allowed()).is_err(),
            "{seed:?} is admitted"
        );
        assert_contained(&shells, seed).unwrap();
    }
}

#[test]
fn the_harness_sees_a_forbidden_program_run() {
    // The oracle itself: a line that runs `touch` and one naming an unknown program.
    let shells = Shells::new();
    let ran = shells.run("touch PWNED; nosuchprogram");
    assert_eq!(ran.len(), shells.shells.len() * 2, "{ran:?}");
    assert!(ran.iter().any(|r| r.ends_with(" ran touch")), "{ran:?}");
    assert!(shells.run("echo hi; true; printf x").is_empty());
}

#[test]
fn admitted_lines_run_only_allowed_programs_in_sh_and_bash() {
    let shells = Shells::new();
    // A few seconds in every `cargo test`; set PINCER_EXEC_DIFF_CASES for a deeper run.
    let cases: u32 = std::env::var("PINCER_EXEC_DIFF_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(512);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let admitted = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&line(), |line| {
            if assert_contained(&shells, &line)? {
                admitted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap();
    // The grammar must reach the shells often enough for the run to mean something.
    let admitted = admitted.into_inner();
    eprintln!("{admitted} of {cases} lines admitted and run");
    assert!(
        admitted >= cases as usize / 8,
        "only {admitted} of {cases} lines were admitted"
    );
}

proptest! {
    #![proptest_config(Config { cases: 512, failure_persistence: None, ..Config::default() })]

    /// Arbitrary text (not only the grammar) never panics the checker or the scan.
    #[test]
    fn arbitrary_lines_pass_the_fuzz_check(line in "\\PC{0,60}") {
        fuzz_check::check(&line);
    }
}
