//! Loads every recorded cassette and replays every response through the ReplayServer.

mod support;

use std::collections::BTreeMap;

use qore_testkit::{fixtures_dir, load_cassettes, reply_from_exchange, ReplayServer, Slicing};
use support::Client;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_cassettes_load_and_replay_byte_exact() {
    let Some(dir) = fixtures_dir() else {
        eprintln!("SKIP: no fixtures directory (set QORE_FIXTURES)");
        return;
    };
    let cassettes = load_cassettes(&dir).unwrap_or_else(|e| panic!("{e}"));
    let mut per_provider: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let (mut docs, mut sse, mut no_ct, mut base64, mut no_req_body) = (0, 0, 0, 0, 0);
    for c in &cassettes {
        assert!(!c.provider.is_empty(), "{}", c.path.display());
        let e = per_provider.entry(c.provider.as_str()).or_default();
        e.0 += 1;
        e.1 += c.exchanges.len();
        for ex in &c.exchanges {
            docs += 1;
            *statuses.entry(ex.status).or_default() += 1;
            sse += usize::from(ex.is_sse());
            no_ct += usize::from(ex.content_type().is_none());
            base64 += usize::from(ex.response_body_encoding.is_some());
            no_req_body += usize::from(ex.request_body.is_none());
        }
    }
    println!(
        "cassette files: {}, documents (exchanges): {docs}",
        cassettes.len()
    );
    println!("per provider (files, exchanges): {per_provider:?}");
    println!("statuses: {statuses:?}");
    println!("sse responses: {sse}, without content-type: {no_ct}, base64 bodies: {base64}, requests without body: {no_req_body}");
    // The fixtures README says 1,697 files: that count includes rig-cassettes/LICENSE-rig-MIT.
    assert_eq!(cassettes.len(), 1696);
    assert_eq!(docs, 2263);

    // Replay every response, in order, over one keep-alive connection.
    let all: Vec<_> = cassettes.iter().flat_map(|c| c.exchanges.iter()).collect();
    let replies = all
        .iter()
        .enumerate()
        .map(|(i, ex)| {
            let slicing = if ex.is_sse() {
                Slicing::PerSseFrame
            } else {
                Slicing::Irregular {
                    seed: i as u64,
                    max: 4096,
                }
            };
            reply_from_exchange(ex, slicing)
        })
        .collect();
    let server = ReplayServer::start(replies).await.expect("start");
    let mut client = Client::connect(server.addr()).await;
    for ex in &all {
        let body = ex.request_body.as_deref().unwrap_or("");
        client
            .send(&ex.method, &ex.path_and_query(), &[], body.as_bytes())
            .await;
        let resp = client.read_response().await;
        assert_eq!(resp.status, ex.status, "{} {}", ex.method, ex.path);
        assert_eq!(
            resp.body(),
            ex.response_bytes(),
            "{} {}",
            ex.method,
            ex.path
        );
        assert_eq!(resp.header("content-type"), ex.content_type());
    }
    let reqs = server.requests();
    assert_eq!(reqs.len(), all.len());
    for (r, ex) in reqs.iter().zip(&all) {
        assert_eq!(r.path, ex.path_and_query());
        assert_eq!(r.body, ex.request_body.as_deref().unwrap_or("").as_bytes());
    }
    assert_eq!(server.disconnects(), 0);
}
