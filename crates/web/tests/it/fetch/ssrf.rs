//! The SSRF table (every class, IPv4, IPv6, mapped and tunnelled forms), the URL checks,
//! allowed hosts, DNS answers that mix public and private addresses, and the messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::IpAddr;

use pincer_web::ssrf::{AddressClass, NetworkPolicy, SsrfError, blocked_class};

fn class(ip: &str) -> Option<AddressClass> {
    blocked_class(ip.parse::<IpAddr>().unwrap())
}

#[test]
fn ipv4_table() {
    use AddressClass::*;
    let cases = [
        ("0.0.0.0", Some(Unspecified)),
        ("0.1.2.3", Some(Unspecified)),
        ("127.0.0.1", Some(Loopback)),
        ("127.255.255.254", Some(Loopback)),
        ("10.0.0.1", Some(Private)),
        ("10.255.255.255", Some(Private)),
        ("172.16.0.1", Some(Private)),
        ("172.31.255.255", Some(Private)),
        ("172.15.255.255", None),
        ("172.32.0.0", None),
        ("192.168.1.1", Some(Private)),
        ("192.169.0.1", None),
        ("169.254.0.1", Some(LinkLocal)),
        ("169.254.169.254", Some(CloudMetadata)),
        ("169.254.170.2", Some(LinkLocal)),
        ("100.64.0.1", Some(CarrierGradeNat)),
        ("100.127.255.255", Some(CarrierGradeNat)),
        ("100.128.0.0", None),
        ("100.63.255.255", None),
        ("100.100.100.200", Some(CloudMetadata)),
        ("224.0.0.1", Some(Multicast)),
        ("239.255.255.250", Some(Multicast)),
        ("255.255.255.255", Some(Broadcast)),
        ("240.0.0.1", Some(Reserved)),
        ("255.255.255.254", Some(Reserved)),
        ("192.0.0.8", Some(Reserved)),
        ("192.88.99.1", Some(Reserved)),
        ("192.0.2.5", Some(Documentation)),
        ("198.51.100.7", Some(Documentation)),
        ("203.0.113.9", Some(Documentation)),
        ("198.18.0.1", Some(Benchmarking)),
        ("198.19.255.255", Some(Benchmarking)),
        ("198.20.0.0", None),
        ("8.8.8.8", None),
        ("1.1.1.1", None),
        ("93.184.216.34", None),
        ("192.0.1.1", None),
        ("223.255.255.255", None),
    ];
    for (ip, want) in cases {
        assert_eq!(class(ip), want, "{ip}");
    }
}

#[test]
fn ipv6_table() {
    use AddressClass::*;
    let cases = [
        ("::", Some(Unspecified)),
        ("::1", Some(Loopback)),
        ("fc00::1", Some(Private)),
        ("fdff:ffff::1", Some(Private)),
        ("fd00:ec2::254", Some(CloudMetadata)),
        ("fe80::1", Some(LinkLocal)),
        ("febf::1", Some(LinkLocal)),
        ("fec0::1", Some(Private)),
        ("ff02::1", Some(Multicast)),
        ("2001:db8::1", Some(Documentation)),
        ("3fff::1", Some(Documentation)),
        ("2001:2::1", Some(Benchmarking)),
        ("2001:10::1", Some(Reserved)),
        ("2001::1", Some(Teredo)),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some(Teredo)),
        ("100::1", Some(Reserved)),
        ("4000::1", Some(Reserved)),
        // IPv4-mapped, -translated and -compatible: the IPv4 address decides.
        ("::ffff:127.0.0.1", Some(Loopback)),
        ("::ffff:10.1.2.3", Some(Private)),
        ("::ffff:169.254.169.254", Some(CloudMetadata)),
        ("::ffff:8.8.8.8", None),
        ("::ffff:0:192.168.0.1", Some(Private)),
        ("::127.0.0.1", Some(Loopback)),
        ("::8.8.8.8", None),
        // NAT64 and 6to4 embed an IPv4 address.
        ("64:ff9b::10.0.0.1", Some(Private)),
        ("64:ff9b::7f00:1", Some(Loopback)),
        ("64:ff9b::8.8.8.8", None),
        ("64:ff9b:1::1", Some(Private)),
        ("2002:c0a8:0101::1", Some(Private)),
        ("2002:7f00:1::", Some(Loopback)),
        ("2002:a9fe:a9fe::1", Some(CloudMetadata)),
        ("2002:0808:0808::1", None),
        ("2606:4700:4700::1111", None),
        ("2a00:1450:4001:80b::200e", None),
    ];
    for (ip, want) in cases {
        assert_eq!(class(ip), want, "{ip}");
    }
}

#[test]
fn every_class_has_a_name() {
    use AddressClass::*;
    let names: Vec<String> = [
        Loopback,
        Private,
        LinkLocal,
        CarrierGradeNat,
        Multicast,
        Unspecified,
        Broadcast,
        Documentation,
        Benchmarking,
        Reserved,
        CloudMetadata,
        Teredo,
        LocalName,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        names,
        [
            "loopback",
            "private network",
            "link-local",
            "carrier-grade NAT (100.64.0.0/10)",
            "multicast",
            "unspecified (\"this network\")",
            "broadcast",
            "documentation-only",
            "benchmarking",
            "reserved",
            "cloud metadata service",
            "Teredo tunnel",
            "local host name",
        ]
    );
}

fn refused(policy: &NetworkPolicy, url: &str) -> String {
    policy.check_url(url).unwrap_err().to_string()
}

#[test]
fn urls_with_literal_addresses_are_checked_in_every_spelling() {
    let policy = NetworkPolicy::default();
    let loopback = "refused 127.0.0.1: it is 127.0.0.1, a loopback address; to allow it set \
                    tools.web.fetch.allowPrivateNetwork: true or add \"127.0.0.1\" to \
                    tools.web.fetch.allowHosts";
    for url in [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://0x7f.0.0.1:8080/x",
        "HTTP://127.0.0.1./",
    ] {
        assert_eq!(refused(&policy, url), loopback, "{url}");
    }
    assert_eq!(
        refused(&policy, "http://169.254.169.254/latest/meta-data/"),
        "refused 169.254.169.254: it is 169.254.169.254, a cloud metadata service address; to \
         reach it anyway add \"169.254.169.254\" to tools.web.fetch.allowHosts"
    );
    assert_eq!(
        refused(&policy, "http://[::ffff:7f00:1]/"),
        "refused ::ffff:127.0.0.1: it is ::ffff:127.0.0.1, a loopback address; to allow it set \
         tools.web.fetch.allowPrivateNetwork: true or add \"::ffff:127.0.0.1\" to \
         tools.web.fetch.allowHosts"
    );
    assert_eq!(
        refused(&policy, "http://[fe80::1]/"),
        "refused fe80::1: it is fe80::1, a link-local address; to allow it set \
         tools.web.fetch.allowPrivateNetwork: true or add \"fe80::1\" to \
         tools.web.fetch.allowHosts"
    );
    assert_eq!(
        refused(&policy, "https://localhost:8443/admin"),
        "refused localhost: it is a local host name; to allow it set \
         tools.web.fetch.allowPrivateNetwork: true or add \"localhost\" to \
         tools.web.fetch.allowHosts"
    );
    assert_eq!(
        refused(
            &policy,
            "http://metadata.google.internal/computeMetadata/v1/"
        ),
        "refused metadata.google.internal: it is a cloud metadata service; to reach it anyway \
         add \"metadata.google.internal\" to tools.web.fetch.allowHosts"
    );
    for url in [
        "http://printer.local/",
        "http://db.corp.internal/",
        "http://a.localhost/",
    ] {
        assert!(refused(&policy, url).contains("a local host name"), "{url}");
    }
    let public = policy.check_url("https://example.com/a?b=c").unwrap();
    assert_eq!(public.as_str(), "https://example.com/a?b=c");
    assert!(policy.check_url("http://8.8.8.8/").is_ok());
    assert!(policy.check_url("http://[2606:4700:4700::1111]/").is_ok());
}

#[test]
fn urls_other_than_plain_http_are_refused() {
    let policy = NetworkPolicy::default();
    assert_eq!(
        refused(&policy, "file:///etc/passwd"),
        "refused \"file:///etc/passwd\": only http and https URLs can be fetched, not file:"
    );
    assert_eq!(
        refused(&policy, "ftp://example.com/x"),
        "refused \"ftp://example.com/x\": only http and https URLs can be fetched, not ftp:"
    );
    assert_eq!(
        refused(&policy, "javascript:alert(1)"),
        "refused \"javascript:alert(1)\": only http and https URLs can be fetched, not javascript:"
    );
    assert_eq!(
        refused(&policy, "data:text/html,<h1>x</h1>"),
        "refused \"data:text/html,<h1>x</h1>\": only http and https URLs can be fetched, not data:"
    );
    assert_eq!(
        refused(&policy, "not a url"),
        "invalid URL \"not a url\": relative URL without a base"
    );
    assert_eq!(
        refused(&policy, "http://"),
        "invalid URL \"http://\": empty host"
    );
    assert_eq!(
        refused(&policy, "http://user:pw@example.com/"),
        "refused \"http://user:pw@example.com/\": URLs with a user name or password are not \
         fetched"
    );
    assert_eq!(
        refused(&policy, "http://127.0.0.1@example.com/"),
        "refused \"http://127.0.0.1@example.com/\": URLs with a user name or password are not \
         fetched"
    );
}

#[test]
fn allowed_hosts_and_private_networks() {
    let hosts = NetworkPolicy {
        allow_private_network: false,
        allow_hosts: vec![
            "127.0.0.1".into(),
            "*.Intranet.example".into(),
            "[::1]".into(),
            "169.254.169.254".into(),
        ],
        ..NetworkPolicy::default()
    };
    assert!(hosts.check_url("http://127.0.0.1:9/x").is_ok());
    assert!(hosts.check_url("http://[::1]/").is_ok());
    assert!(hosts.check_url("http://169.254.169.254/").is_ok());
    assert!(hosts.check_url("http://127.0.0.2/").is_err());
    assert!(hosts.host_allowed("wiki.intranet.example"));
    assert!(hosts.host_allowed("a.b.INTRANET.example."));
    assert!(!hosts.host_allowed("intranet.example"));
    assert!(!hosts.host_allowed("evilintranet.example"));
    let ip: IpAddr = "10.0.0.5".parse().unwrap();
    assert!(
        hosts
            .check_addresses("wiki.intranet.example", &[ip])
            .is_ok()
    );
    assert!(hosts.check_addresses("wiki.example", &[ip]).is_err());

    let private = NetworkPolicy {
        allow_private_network: true,
        allow_hosts: vec![],
        ..NetworkPolicy::default()
    };
    assert!(private.check_url("http://127.0.0.1/").is_ok());
    assert!(private.check_url("http://192.168.1.1/").is_ok());
    assert!(private.check_url("http://printer.local/").is_ok());
    // Metadata services stay closed unless named.
    assert!(private.check_url("http://169.254.169.254/").is_err());
    assert!(private.check_url("http://[fd00:ec2::254]/").is_err());
}

#[test]
fn a_dns_answer_with_one_private_address_is_refused() {
    let policy = NetworkPolicy::default();
    let public: IpAddr = "93.184.216.34".parse().unwrap();
    let private: IpAddr = "10.0.0.7".parse().unwrap();
    let mapped: IpAddr = "::ffff:192.168.0.1".parse().unwrap();
    assert_eq!(policy.check_addresses("example.com", &[public]), Ok(()));
    assert_eq!(
        policy
            .check_addresses("rebind.example", &[public, private])
            .unwrap_err()
            .to_string(),
        "refused rebind.example: it is 10.0.0.7, a private network address; to allow it set \
         tools.web.fetch.allowPrivateNetwork: true or add \"rebind.example\" to \
         tools.web.fetch.allowHosts"
    );
    assert!(matches!(
        policy.check_addresses("x.example", &[public, mapped]),
        Err(SsrfError::Blocked {
            class: AddressClass::Private,
            ..
        })
    ));
    assert_eq!(
        policy
            .check_addresses("empty.example", &[])
            .unwrap_err()
            .to_string(),
        "could not resolve empty.example: no addresses"
    );
}

#[tokio::test]
async fn navigation_checks_resolve_names() {
    let policy = NetworkPolicy::default();
    // A literal needs no DNS; "localhost" is refused by name before any lookup.
    assert!(policy.check_navigation("http://127.0.0.1/").await.is_err());
    assert!(policy.check_navigation("http://localhost/").await.is_err());
    let allowed = NetworkPolicy {
        allow_private_network: false,
        allow_hosts: vec!["127.0.0.1".into()],
        ..NetworkPolicy::default()
    };
    let url = allowed.check_url("http://127.0.0.1:4000/p").unwrap();
    assert_eq!(
        allowed.resolve_checked(&url).await.unwrap(),
        vec!["127.0.0.1:4000".parse().unwrap()]
    );
}

/// The resolver reqwest is given: it refuses what the table blocks, by name or by address,
/// and hands back only the addresses it checked.
#[tokio::test]
async fn the_resolver_checks_what_it_resolves() {
    use reqwest::dns::{Name, Resolve};
    use std::str::FromStr;

    let resolve = |policy: NetworkPolicy, name: &'static str| async move {
        let resolver = policy.resolver();
        match resolver.resolve(Name::from_str(name).unwrap()).await {
            Ok(addrs) => Ok(addrs.map(|a| a.ip()).collect::<Vec<_>>()),
            Err(e) => Err(e.to_string()),
        }
    };
    // A name the system resolves without DNS (a literal) to loopback: refused by address.
    assert_eq!(
        resolve(NetworkPolicy::default(), "127.0.0.1")
            .await
            .unwrap_err(),
        "refused 127.0.0.1: it is 127.0.0.1, a loopback address; to allow it set \
         tools.web.fetch.allowPrivateNetwork: true or add \"127.0.0.1\" to \
         tools.web.fetch.allowHosts"
    );
    // A local name: refused before any lookup.
    assert_eq!(
        resolve(NetworkPolicy::default(), "localhost")
            .await
            .unwrap_err(),
        "refused localhost: it is a local host name; to allow it set \
         tools.web.fetch.allowPrivateNetwork: true or add \"localhost\" to \
         tools.web.fetch.allowHosts"
    );
    let allowed = NetworkPolicy {
        allow_private_network: false,
        allow_hosts: vec!["127.0.0.1".into()],
        ..NetworkPolicy::default()
    };
    assert_eq!(
        resolve(allowed, "127.0.0.1").await.unwrap(),
        vec!["127.0.0.1".parse::<IpAddr>().unwrap()]
    );
    let private = NetworkPolicy {
        allow_private_network: true,
        allow_hosts: vec![],
        ..NetworkPolicy::default()
    };
    assert_eq!(
        resolve(private, "127.0.0.1").await.unwrap(),
        vec!["127.0.0.1".parse::<IpAddr>().unwrap()]
    );
}

/// A client built with the policy's resolver and redirect policy connects to an allowed
/// name and refuses the same server under a name the policy blocks.
#[tokio::test]
async fn a_client_with_the_resolver_connects_only_where_allowed() {
    let site = pincer_fakes::fake_site::FakeSite::start().await.unwrap();
    let client = |policy: &NetworkPolicy| {
        reqwest::Client::builder()
            .dns_resolver(policy.resolver())
            .redirect(policy.redirect_policy())
            .no_proxy()
            .build()
            .unwrap()
    };
    let url = format!("http://localhost:{}/notes.txt", site.addr().port());
    let closed = NetworkPolicy::default();
    let err = client(&closed).get(&url).send().await.unwrap_err();
    assert_eq!(
        pincer_web::ssrf::find_ssrf_error(&err).map(ToString::to_string),
        Some(
            "refused localhost: it is a local host name; to allow it set \
             tools.web.fetch.allowPrivateNetwork: true or add \"localhost\" to \
             tools.web.fetch.allowHosts"
                .to_owned()
        )
    );
    assert_eq!(site.hits("/notes.txt"), 0);
    let open = NetworkPolicy {
        allow_private_network: false,
        allow_hosts: vec!["LOCALHOST".into()],
        ..NetworkPolicy::default()
    };
    let answer = client(&open).get(&url).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(site.hits("/notes.txt"), 1);
}
