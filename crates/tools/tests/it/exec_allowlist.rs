//! The allowlist command-line parser: tokenizing, and every known bypass refused with a
//! reason.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use pincer_tools::exec::allowlist::{AllowlistError, check, parse};

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
    let not_rm = AllowlistError::NotAllowed {
        program: "rm".into(),
    };
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
    assert!(matches!(
        refused("ls $(rm x)"),
        AllowlistError::Substitution(_)
    ));
    assert!(matches!(
        refused("ls \"$(rm x)\""),
        AllowlistError::Substitution(_)
    ));
    assert!(matches!(
        refused("ls `rm x`"),
        AllowlistError::Substitution(_)
    ));
    assert!(matches!(
        refused("ls ${X:-`rm`}"),
        AllowlistError::Unsupported(_)
    ));
    assert!(matches!(
        refused("ls <(rm)"),
        AllowlistError::ProcessSubstitution(_)
    ));
    assert!(matches!(
        refused("ls > out"),
        AllowlistError::Redirection { .. }
    ));
    assert!(matches!(
        refused("ls >>out"),
        AllowlistError::Redirection { .. }
    ));
    assert!(matches!(
        refused("ls &> out"),
        AllowlistError::Redirection { .. }
    ));
    assert!(matches!(
        refused("ls 2>out"),
        AllowlistError::Redirection { .. }
    ));
    assert!(matches!(
        refused("echo < /etc/passwd"),
        AllowlistError::Redirection { .. }
    ));
    assert!(matches!(
        refused("ls >&out"),
        AllowlistError::Redirection { .. }
    ));
    assert_eq!(refused("(rm)"), AllowlistError::Subshell);
    assert_eq!(refused("cat <<EOF"), AllowlistError::HereDocument);
    assert!(matches!(refused("$X"), AllowlistError::DynamicProgram(_)));
    assert!(matches!(refused("l*"), AllowlistError::DynamicProgram(_)));
    assert!(matches!(refused("ls 'a"), AllowlistError::Unterminated(_)));
    assert!(matches!(
        refused("echo \"a"),
        AllowlistError::Unterminated(_)
    ));
    assert_eq!(
        refused("PATH=/tmp ls"),
        AllowlistError::GuardedAssignment("PATH".into())
    );
    assert_eq!(
        refused("./ls"),
        AllowlistError::NotAllowed {
            program: "./ls".into()
        }
    );
    assert_eq!(
        refused("sh -c ls"),
        AllowlistError::NotAllowed {
            program: "sh".into()
        }
    );
    assert_eq!(
        refused("env rm"),
        AllowlistError::NotAllowed {
            program: "env".into()
        }
    );
    // Quoting an assignment makes it a program word.
    assert!(matches!(
        refused("'FOO=1' ls"),
        AllowlistError::NotAllowed { .. }
    ));
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
                AllowlistError::Unsupported(_)
                    | AllowlistError::Substitution(_)
                    | AllowlistError::Unterminated(_)
                    | AllowlistError::MissingTarget(_)
            ),
            "{line:?}: {err:?}"
        );
    }
    assert_eq!(
        check("LC_ALL=zh_TW.big5; echo", &allowed),
        Err(AllowlistError::GuardedAssignment("LC_ALL".into()))
    );
    assert_eq!(
        check("echo ${PATH:=/tmp}", &allowed),
        Err(AllowlistError::GuardedAssignment("PATH".into()))
    );
    assert_eq!(
        check("{rm,x}", &allowed),
        Err(AllowlistError::DynamicProgram("{rm,x}".into()))
    );
    for line in [
        "printf -v 'a[$(id)]' x",
        "printf \"$f\" x",
        "test -v 'a[$(id)]'",
        "test \"$a\" = b",
    ] {
        assert!(
            matches!(
                check(line, &allowed),
                Err(AllowlistError::EvaluatingArgument { .. })
            ),
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
