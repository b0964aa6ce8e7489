//! The `ssh` options every sample's connection is opened with, before the user's own.

use crate::destination::NO_HOST_KEY_UPDATES;
use crate::model::{Mode, SampleRequest};

/// The options of every connection a sample opens, before the user's own: verbose (the
/// negotiated names), nothing forwarded, no multiplexing, no prompts, no `RemoteCommand`
/// from the user's config (ssh refuses one beside a command line), and the forced parts
/// of the suite.
pub fn session_options(req: &SampleRequest) -> Vec<String> {
    let timeout = req.timeout.as_secs().clamp(1, 30);
    // Typing asks for a terminal (`-tt`: ssh's stdin is a pipe), every other mode none.
    let tty = if req.mode == Mode::Typing {
        "-tt"
    } else {
        "-T"
    };
    let mut args: Vec<String> = vec!["-v".into(), tty.into(), "-a".into(), "-x".into()];
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
        "ForwardX11=no",
        "RemoteCommand=none",
        "PermitLocalCommand=no",
        NO_HOST_KEY_UPDATES,
    ] {
        opt(fixed.to_string());
    }
    opt(format!("ConnectTimeout={timeout}"));
    opt(format!(
        "RequestTTY={}",
        if req.mode == Mode::Typing {
            "force"
        } else {
            "no"
        }
    ));
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
