//! web_fetch tests: the SSRF table and policy ([`ssrf`]), the tool against the fixture site
//! on 127.0.0.1 (`pincer_fakes::fake_site`): pages and charsets ([`pages`]), refusals and
//! redirects ([`refusals`]), size and time limits ([`limits`]), the cache ([`cache`]), and
//! extraction without the network ([`extract`]).

mod cache;
mod common;
mod extract;
mod limits;
mod pages;
mod refusals;
mod ssrf;
