//! The allowlist command-line parser: tokenizing, and every known bypass refused with a
//! reason.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use std::mem::discriminant;

use pincer_tools::exec::allowlist::{AllowlistError as E, check, parse};

fn words(line: &str) -> Vec<Vec<String>> {
    parse(line)
        .unwrap()
        .into_iter()
        .map(|c| c.into_iter().map(|w| w.text).collect())
        .collect()
}

#[test]
fn tokenizes_quotes_escapes_and_operators() {
    assert_eq!(
        words(r#"echo 'a b' "c $HOME" d\ e; ls -l|wc && x || y & z"#),
        vec![
            vec!["echo", "a b", "c $HOME", "d e"],
            vec!["ls", "-l"],
            vec!["wc"],
            vec!["x"],
            vec!["y"],
            vec!["z"],
        ]
    );
    assert_eq!(
        words("ls \\\n a # ; rm \\\nb"),
        vec![vec!["ls", "a"], vec!["b"]]
    );
    assert_eq!(words("ls 2>&1 >/dev/null 2> /dev/null"), vec![vec!["ls"]]);
    assert_eq!(words("\"l\"'s'"), vec![vec!["ls"]]);
}

#[test]
fn checks_programs_and_refuses_bypasses() {
    let allowed = vec!["ls".to_owned(), "echo".to_owned()];
    assert_eq!(
        check("FOO=1 ls -la | echo", &allowed).unwrap(),
        ["ls", "echo"]
    );
    let refused = |line: &str| check(line, &allowed).unwrap_err();
    let not_allowed = |program: &str| E::NotAllowed {
        program: program.into(),
    };
    let not_rm = not_allowed("rm");
    for line in [
        "ls && rm x",
        "ls; rm x",
        "ls | rm",
        "ls\nrm",
        "ls & rm",
        "ls || rm",
    ] {
        assert_eq!(refused(line), not_rm, "{line}");
    }
    // Refused with an error of the sample's variant; what it carries is not compared.
    let kinds = [
        (
            ["ls $(rm x)", "ls \"$(rm x)\"", "ls `rm x`"].as_slice(),
            E::Substitution(""),
        ),
        (&["ls ${X:-`rm`}"], E::Unsupported(String::new())),
        (&["ls <(rm)"], E::ProcessSubstitution("")),
        (
            &[
                "ls > out",
                "ls >>out",
                "ls &> out",
                "ls 2>out",
                "echo < /etc/passwd",
                "ls >&out",
            ],
            E::Redirection {
                op: String::new(),
                target: String::new(),
            },
        ),
        (&["$X", "l*"], E::DynamicProgram(String::new())),
        (&["ls 'a", "echo \"a"], E::Unterminated("")),
        // Quoting an assignment makes it a program word.
        (
            &["'FOO=1' ls"],
            E::NotAllowed {
                program: String::new(),
            },
        ),
    ];
    for (lines, sample) in kinds {
        for line in lines {
            let err = refused(line);
            assert_eq!(discriminant(&err), discriminant(&sample), "{line}: {err:?}");
        }
    }
    let exactly = [
        ("(rm)", E::Subshell),
        ("cat <<EOF", E::HereDocument),
        ("PATH=/tmp ls", E::GuardedAssignment("PATH".into())),
        ("./ls", not_allowed("./ls")),
        ("sh -c ls", not_allowed("sh")),
        ("env rm", not_allowed("env")),
    ];
    for (line, error) in exactly {
        assert_eq!(refused(line), error, "{line}");
    }
    assert!(check("X=1", &allowed).is_ok());
    assert!(check("ls '$(not run)' \\`x\\` # $(comment)", &allowed).is_ok());
}

/// Issue 17, finding 1: the checker must end `${...}` where the shell does, so a `${`
/// whose body could nest, quote or expand is refused, and so is everything else the
/// tokenizer does not model exactly.
#[test]
fn refuses_what_the_shell_could_read_differently() {
    let allowed = vec!["echo".to_owned(), "printf".to_owned(), "test".to_owned()];
    for line in [
        "echo ${x:-{} ; touch ~/PWNED ; id #}",
        "echo ${x:-'}'}\ntouch ~/PWNED\necho '",
        "echo ${x:-\"}\"}",
        "echo ${x:-\\}}",
        "echo ${x:-a b}",
        "echo ${x:-$y}",
        "echo ${x:-;}",
        "echo ${x@P}",
        "echo ${!x}",
        "echo ${x:1}",
        "echo ${x/a/b}",
        "echo ${a[1]}",
        "echo ${}",
        "echo $((1+1))",
        "echo $[1+1]",
        "echo $'a'",
        "echo $\"a\"",
        "echo $~",
        "echo a\\\nb",
        "echo \"a\\\nb\"",
        "echo a;\\\nid",
        "echo a ;; id",
        "echo a ;& id",
        "echo >#x",
        // Found by the fuzz target: the length of a special parameter.
        "printf  echo x${#$}' x\u{c}\0 #)]' x",
        "echo ${##}",
        "echo ${#@}",
        "printf  e\0q $#accho p${$#} n\0h",
        "echo ${$#}",
        "echo ${@:-x}",
        "echo ${?-x}",
    ] {
        let err = check(line, &allowed).unwrap_err();
        assert!(
            matches!(
                err,
                E::Unsupported(_) | E::Substitution(_) | E::Unterminated(_) | E::MissingTarget(_)
            ),
            "{line:?}: {err:?}"
        );
    }
    let exactly = [
        (
            "LC_ALL=zh_TW.big5; echo",
            E::GuardedAssignment("LC_ALL".into()),
        ),
        ("echo ${PATH:=/tmp}", E::GuardedAssignment("PATH".into())),
        ("{rm,x}", E::DynamicProgram("{rm,x}".into())),
    ];
    for (line, error) in exactly {
        assert_eq!(check(line, &allowed), Err(error), "{line}");
    }
    for line in [
        "printf -v 'a[$(id)]' x",
        "printf \"$f\" x",
        "test -v 'a[$(id)]'",
        "test \"$a\" = b",
    ] {
        assert!(
            matches!(check(line, &allowed), Err(E::EvaluatingArgument { .. })),
            "{line:?}"
        );
    }
}

#[test]
fn accepts_the_forms_it_models() {
    let allowed = vec!["echo".to_owned(), "printf".to_owned()];
    for line in [
        "echo ${x} ${x:-a/b.c} ${x#*.} ${x%%/*} ${#x} ${#} ${1} $@ \"$*\" $? $$",
        "echo \"${HOME:-/tmp}/x\" '${x:-{}' {a,b} a#b # ${x:-{}",
        "echo cost: $ 5 \"$\" a$/b",
        "printf '%s\\n' a b",
        "printf -- -v",
        "echo a \\\n  b",
        "X=1 echo \"$X\"",
    ] {
        assert!(
            check(line, &allowed).is_ok(),
            "{line:?}: {:?}",
            check(line, &allowed)
        );
    }
    assert_eq!(
        words("echo ${x:-a}b '${y}' #${z:-{}"),
        vec![vec!["echo", "${x:-a}b", "${y}"]]
    );
}
