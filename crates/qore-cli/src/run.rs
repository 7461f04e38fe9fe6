//! The `run`, `models` and `local` commands: wiring arguments to the engine.

use std::process::ExitCode;

use futures_util::StreamExt as _;
use qore_client::{
    local, protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{ErrorInfo, History, Message, TurnOutcome};

use crate::output::Output;
use crate::{EndpointArgs, LocalAction, RunArgs};

const FAILURE: u8 = 1;
const CANCELLED: u8 = 130;

enum Ended {
    Finished,
    Cancelled,
}

pub async fn run(args: RunArgs) -> ExitCode {
    let mut out = Output::new(args.endpoint.json);
    let cancel = cancel_on_ctrl_c();
    let turn = tokio::select! {
        biased;
        turn = run_turn(&args, &mut out, cancel.clone()) => turn,
        // Ctrl-C before the stream exists (starting the local server, listing models).
        () = cancel.cancelled() => Ok(Ended::Cancelled),
    };
    match turn {
        Ok(Ended::Finished) => ExitCode::SUCCESS,
        Ok(Ended::Cancelled) => {
            out.cancelled();
            ExitCode::from(CANCELLED)
        }
        Err(error) => {
            out.error(&error);
            ExitCode::from(FAILURE)
        }
    }
}

/// A token cancelled by Ctrl-C. The handler is registered before this returns, so no
/// Ctrl-C is missed while the stream is being set up.
fn cancel_on_ctrl_c() -> CancellationToken {
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut interrupts) = signal(SignalKind::interrupt()) {
            tokio::spawn(async move {
                if interrupts.recv().await.is_some() {
                    on_ctrl_c.cancel();
                }
            });
            return cancel;
        }
    }
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    cancel
}

async fn run_turn(
    args: &RunArgs,
    out: &mut Output,
    cancel: CancellationToken,
) -> Result<Ended, ErrorInfo> {
    let (client, is_local) = connect(&args.endpoint).await?;
    let model = match (&args.model, is_local) {
        (Some(model), _) => model.clone(),
        (None, true) => local::MODEL_ID.to_owned(),
        (None, false) => only_model(&client).await?,
    };
    let mut history = History::new();
    if let Some(system) = &args.system {
        history.push(Message::system(system.as_str()));
    }
    history.push(Message::user(args.prompt.join(" ")));
    let options = RequestOptions {
        stream: !args.no_stream,
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        ..RequestOptions::default()
    };
    let request = ChatRequest {
        model: &model,
        history: &history,
        tools: &[],
        options: &options,
    };

    let mut stream = client.stream(&request, cancel);
    while let Some(event) = stream.next().await {
        out.event(&event);
    }
    match stream.finish().await {
        TurnOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => {
            let text = message.text();
            history.push(message);
            out.result(&text, &history, &usage, stop_reason.as_ref());
            Ok(Ended::Finished)
        }
        TurnOutcome::Failed { error, .. } => Err(error),
        TurnOutcome::Cancelled { .. } => Ok(Ended::Cancelled),
    }
}

pub async fn models(args: EndpointArgs) -> ExitCode {
    let mut out = Output::new(args.json);
    let listed = async {
        let (client, _) = connect(&args).await?;
        client.list_models().await
    };
    match listed.await {
        Ok(models) => {
            out.models(&models);
            ExitCode::SUCCESS
        }
        Err(error) => {
            out.error(&error);
            ExitCode::from(FAILURE)
        }
    }
}

pub async fn local(action: LocalAction) -> ExitCode {
    let result = match action {
        LocalAction::Start => local::ensure_running().await.map(|url| println!("{url}")),
        LocalAction::Stop => local::stop().await,
        LocalAction::Status => {
            if local::is_running().await {
                println!("running at {}", local::base_url());
                Ok(())
            } else {
                println!("not running");
                return ExitCode::from(FAILURE);
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            Output::new(false).error(&error);
            ExitCode::from(FAILURE)
        }
    }
}

/// A client for the endpoint the arguments name; `true` when it is the local model server.
async fn connect(args: &EndpointArgs) -> Result<(Client, bool), ErrorInfo> {
    let protocol = protocols::by_name(&args.protocol).ok_or_else(|| {
        ErrorInfo::config(format!(
            "unknown protocol {:?} (known: {})",
            args.protocol,
            protocols::NAMES.join(", ")
        ))
    })?;
    let api_key = match &args.api_key_env {
        Some(var) => Some(std::env::var(var).map_err(|_| {
            ErrorInfo::config(format!(
                "environment variable {var} (from --api-key-env) is not set"
            ))
        })?),
        None => None,
    };
    let (base_url, is_local) = match &args.url {
        Some(url) => (url.clone(), false),
        None => {
            let base = local::base_url_for(protocol.name()).ok_or_else(|| {
                ErrorInfo::config(format!(
                    "--url is required with --protocol {}: the local model server does not speak it",
                    args.protocol
                ))
            })?;
            eprintln!(
                "qore: no --url given: using the local model server at {base} ({}), starting it if needed",
                local::MODEL_ID
            );
            local::ensure_running().await?;
            (base, true)
        }
    };
    let config = ClientConfig {
        base_url,
        endpoint: args.endpoint.clone(),
        api_key,
        ..ClientConfig::default()
    };
    Ok((Client::new(protocol, config)?, is_local))
}

/// The model to use when none was named: the server's only one.
async fn only_model(client: &Client) -> Result<String, ErrorInfo> {
    let models = client.list_models().await?;
    match models.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(ErrorInfo::config(
            "the server lists no models; pass --model",
        )),
        many => Err(ErrorInfo::config(format!(
            "the server lists {} models ({}...); pass --model",
            many.len(),
            many.iter()
                .take(3)
                .map(|m| m.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
