//! The `ssh` options every sample's connection is opened with, before the user's own.

use crate::destination::NO_HOST_KEY_UPDATES;
use crate::model::{Mode, SampleRequest};

/// The options of every connection a sample opens, before the user's own: verbose (the
/// negotiated names), nothing forwarded, no multiplexing, no prompts, no `RemoteCommand`
/// from the user's config (ssh refuses one beside a command line), and the forced parts
/// of the suite.
pub fn session_options(req: &SampleRequest) -> Vec<String> {
    let timeout = req.timeout.as_secs().clamp(1, 30);
    // Typing and X11 ask for a terminal (`-tt`: ssh's stdin is a pipe; a key typed in it
    // starts the keystroke clock), every other mode none; X11 alone is forwarded.
    let terminal = matches!(req.mode, Mode::Typing | Mode::X11);
    let x11 = req.mode == Mode::X11;
    let tty = if terminal { "-tt" } else { "-T" };
    let forward = if x11 { "-X" } else { "-x" };
    let mut args: Vec<String> = vec!["-v".into(), tty.into(), "-a".into(), forward.into()];
    let mut opt = |kv: String| {
        args.push("-o".into());
        args.push(kv);
    };
    for fixed in [
        "BatchMode=yes",
        "ControlMaster=no",
        "ControlPath=none",
        "ClearAllForwardings=yes",
        "ForwardAgent=no",
        "RemoteCommand=none",
        "PermitLocalCommand=no",
        NO_HOST_KEY_UPDATES,
    ] {
        opt(fixed.to_string());
    }
    opt(format!("ConnectTimeout={timeout}"));
    opt(format!(
        "RequestTTY={}",
        if terminal { "force" } else { "no" }
    ));
    // Untrusted: the server's X clients may not read other windows or the keyboard.
    opt(format!("ForwardX11={}", if x11 { "yes" } else { "no" }));
    if x11 {
        opt("ForwardX11Trusted=no".into());
    }
    if let Some(k) = req.suite.keystrokes {
        opt(format!("ObscureKeystrokeTiming={k}"));
    }
    opt(format!(
        "Compression={}",
        if req.suite.compression.is_some() {
            "yes"
        } else {
            "no"
        }
    ));
    let s = &req.suite;
    for (key, value) in [
        ("KexAlgorithms", &s.kex),
        ("HostKeyAlgorithms", &s.hostkey),
        ("Ciphers", &s.cipher),
        ("MACs", &s.mac),
    ] {
        if let Some(v) = value {
            opt(format!("{key}={v}"));
        }
    }
    args
}
