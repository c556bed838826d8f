//! web_fetch tests: the SSRF table and policy ([`ssrf`]), and the tool against the fixture
//! site on 127.0.0.1 (`pincer_fakes::fake_site`).

mod ssrf;
