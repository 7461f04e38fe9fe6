//! Three servers on one SQLite file, each with its own connection (as three processes on one
//! machine): keys, `rpm` and stored conversations behave as on one server. The same scenarios
//! run on PostgreSQL in `stateless_pg.rs`.

mod fleet;

fn location(dir: &tempfile::TempDir) -> String {
    dir.path().join("qore.db").to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_shared_at_once_and_revocations_reach_every_server() {
    let dir = tempfile::tempdir().unwrap();
    fleet::keys_are_shared_at_once_and_revocations_reach_every_server(&location(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpm_is_one_window_across_servers() {
    let dir = tempfile::tempdir().unwrap();
    fleet::rpm_is_one_window_across_servers(&location(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_continue_on_another_server() {
    let dir = tempfile::tempdir().unwrap();
    fleet::conversations_continue_on_another_server(&location(&dir)).await;
}
