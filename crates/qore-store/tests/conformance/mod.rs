//! The conformance suite: every promise of the `Store` interface, checked the same way on
//! every backend (the request log too: `request_log.rs`). A runner (`tests/conformance_sqlite.rs`, `tests/conformance_postgres.rs`)
//! says how to make a fresh, empty store location and calls [`conformance_suite!`], which
//! makes one test per case below; nothing in a case knows which backend it runs on.
//!
//! Cases take one store (`async fn(Arc<dyn Store>)`; a second handle on the same store is
//! `qore_store::open(&store.location())`), or two for copying (`async fn(from, to)`, run for
//! each pair of backends the runner lists), or a location not yet opened (the process cases,
//! which re-execute the test binary as writers).

pub mod admin;
pub mod copy;
pub mod errors;
pub mod file_changes;
pub mod import;
pub mod keys;
pub mod limits;
pub mod lookup;
pub mod processes;
pub mod request_log;
pub mod responses;
pub mod sessions;
pub mod turns;
pub mod usage;

use std::future::Future;
use std::sync::Arc;

use qore_store::Store;

/// A fresh, empty store location, and what must live as long as it (a temporary directory).
pub struct Place {
    pub location: String,
    _keep: Option<tempfile::TempDir>,
}

impl Place {
    /// A location that needs nothing kept alive (a database on a server).
    #[allow(dead_code)] // the SQLite runner has no server
    pub fn at(location: String) -> Place {
        Place {
            location,
            _keep: None,
        }
    }
}

/// A new SQLite file in a new temporary directory (not created yet: opening creates it).
pub fn sqlite_place() -> Place {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let location = dir.path().join("qore.db").display().to_string();
    Place {
        location,
        _keep: Some(dir),
    }
}

/// Open the store at `location`, or fail the test saying why.
pub async fn open(location: &str) -> Arc<dyn Store> {
    match qore_store::open(location).await {
        Ok(store) => store,
        Err(e) => panic!("cannot open the store at {location}: {e}"),
    }
}

/// Run a case on a store opened at a fresh place.
pub async fn run<F, Fut>(place: Place, case: F)
where
    F: FnOnce(Arc<dyn Store>) -> Fut,
    Fut: Future<Output = ()>,
{
    let store = open(&place.location).await;
    case(store).await;
    drop(place);
}

/// Run a copying case from a store at one fresh place to one at another.
pub async fn run_pair<F, Fut>(from: Place, to: Place, case: F)
where
    F: FnOnce(Arc<dyn Store>, Arc<dyn Store>) -> Fut,
    Fut: Future<Output = ()>,
{
    let (source, target) = (open(&from.location).await, open(&to.location).await);
    case(source, target).await;
    drop((from, to));
}

/// The whole suite for a runner: `fresh` makes a [`Place`] of the runner's backend; each
/// `name => (from, to)` pair runs the copying cases from a place of `from` to one of `to`.
macro_rules! conformance_suite {
    (fresh = $fresh:path, pairs = [$($pair:ident => ($from:path, $to:path)),* $(,)?]) => {
        single_tests! { $fresh;
            sessions: [
                a_multi_turn_session_with_tools_round_trips,
                sessions_list_newest_write_first_per_project,
                updated_at_strictly_increases_across_the_store,
                rename_refuses_a_taken_name_and_remove_deletes_everything,
                a_compressed_session_links_to_its_original_until_that_is_removed,
                ping_answers,
            ],
            lookup: [
                sessions_are_found_by_id_name_or_unique_prefix,
                the_resolver_says_no_such_session_or_lists_an_ambiguous_prefix,
            ],
            turns: [
                turns_come_back_as_they_were_appended,
                an_undone_turn_stays_stored_but_leaves_the_history,
                a_failed_or_cancelled_turn_is_kept_without_its_partial_answer,
                a_malformed_turn_is_refused_and_nothing_is_written,
            ],
            import: [
                an_imported_session_keeps_its_turns_times_and_undone_flags,
                an_import_with_one_bad_turn_writes_nothing,
            ],
            file_changes: [
                changes_come_back_with_the_last_turn_not_undone,
                a_turn_with_a_bad_change_is_refused_whole,
            ],
            keys: [
                a_key_round_trips_and_is_found_by_name_id_prefix_and_hash,
                bad_keys_are_refused_with_the_reason,
                revoking_keeps_the_key_and_changes_the_version,
                another_handle_sees_keys_created_and_revoked,
            ],
            usage: [
                rows_add_up_per_day_key_model_and_agent,
                a_batch_adds_up_in_one_call,
                two_handles_adding_at_once_lose_nothing,
            ],
            request_log: [
                a_batch_round_trips_and_pages_newest_first,
                every_filter_of_the_log_holds,
                pruning_deletes_what_started_before,
                usage_sums_are_grouped_by_the_database,
            ],
            admin: [
                a_key_page_is_filtered_and_paged_by_the_database,
                a_key_change_sets_only_its_fields_and_moves_the_version,
                a_session_page_is_newest_first_and_searched_by_the_database,
                usage_sums_split_by_agent,
            ],
            responses: [
                a_response_names_a_turn_until_deleted_or_its_session_is_removed,
                a_response_before_any_whole_turn_keeps_its_pending_messages,
            ],
            limits: [
                rpm_admits_exactly_the_limit_under_concurrency,
                tpm_counts_the_tokens_recorded_for_the_key,
                the_budget_is_the_keys_lifetime_usage,
                a_key_without_limits_is_always_admitted,
            ],
            errors: [
                every_error_keeps_its_kind,
            ],
        }
        $(
            pair_tests! { $pair, $from, $to;
                a_copied_session_keeps_ids_names_times_seqs_undone_and_changes,
                a_copied_key_keeps_its_revocation_and_usage_its_counts,
                a_copied_response_names_the_copied_turn,
                copy_store_copies_everything_once,
            }
        )*
        mod processes {
            #[test]
            fn child_writer() {
                crate::conformance::processes::child_writer();
            }

            #[test]
            fn a_writer_killed_mid_write_loses_at_most_the_turn_in_flight() {
                let place = $fresh();
                crate::conformance::processes::a_writer_killed_mid_write(&place.location);
            }

            #[test]
            fn two_processes_writing_different_sessions_both_succeed() {
                let place = $fresh();
                crate::conformance::processes::two_writers_at_once(&place.location);
            }
        }
    };
}

/// One test per case taking one store, in a module per topic.
macro_rules! single_tests {
    ($fresh:path; $($topic:ident: [$($case:ident),* $(,)?]),* $(,)?) => {
        $(
            mod $topic {
                $(
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $case() {
                        let place = $fresh();
                        crate::conformance::run(place, crate::conformance::$topic::$case).await;
                    }
                )*
            }
        )*
    };
}

/// One test per copying case, in a module named for the pair of backends.
macro_rules! pair_tests {
    ($pair:ident, $from:path, $to:path; $($case:ident),* $(,)?) => {
        mod $pair {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let (from, to) = ($from(), $to());
                    crate::conformance::run_pair(from, to, crate::conformance::copy::$case).await;
                }
            )*
        }
    };
}
