//! Registers `echoes-lsp` as a language server for Markdown in Zed.
//!
//! The server itself is the `echoes-lsp` program (installed with pip or pipx); this extension only
//! tells Zed how to start it and hands over the `lsp.echoes-lsp` settings.

use zed_extension_api::{
    self as zed, serde_json::Value, settings::LspSettings, LanguageServerId, Result, Worktree,
};

const SERVER: &str = "echoes-lsp";

struct EchoesExtension;

fn lsp_settings(worktree: &Worktree) -> Option<LspSettings> {
    LspSettings::for_worktree(SERVER, worktree).ok()
}

impl zed::Extension for EchoesExtension {
    fn new() -> Self {
        EchoesExtension
    }

    /// `lsp.echoes-lsp.binary` when set, else `echoes-lsp serve` from the worktree's PATH.
    fn language_server_command(
        &mut self,
        _id: &LanguageServerId,
        worktree: &Worktree,
    ) -> Result<zed::Command> {
        let binary = lsp_settings(worktree).and_then(|settings| settings.binary);
        let command = binary
            .as_ref()
            .and_then(|binary| binary.path.clone())
            .or_else(|| worktree.which(SERVER))
            .ok_or_else(|| {
                format!(
                    "{SERVER} was not found on PATH: install it (pipx install echoes-lsp) or set \
                     lsp.{SERVER}.binary.path"
                )
            })?;
        let args = binary
            .as_ref()
            .and_then(|binary| binary.arguments.clone())
            .unwrap_or_else(|| vec!["serve".to_string()]);
        let mut env = worktree.shell_env();
        if let Some(extra) = binary.and_then(|binary| binary.env) {
            env.extend(extra);
        }
        Ok(zed::Command { command, args, env })
    }

    /// `lsp.echoes-lsp.initialization_options`.
    fn language_server_initialization_options(
        &mut self,
        _id: &LanguageServerId,
        worktree: &Worktree,
    ) -> Result<Option<Value>> {
        Ok(lsp_settings(worktree).and_then(|settings| settings.initialization_options))
    }

    /// `lsp.echoes-lsp.settings`, answered to the server's `workspace/configuration` requests.
    fn language_server_workspace_configuration(
        &mut self,
        _id: &LanguageServerId,
        worktree: &Worktree,
    ) -> Result<Option<Value>> {
        Ok(lsp_settings(worktree).and_then(|settings| settings.settings))
    }
}

zed::register_extension!(EchoesExtension);
