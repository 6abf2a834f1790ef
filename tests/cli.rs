//! End-to-end: the `respawn` binary runs a tiny storm, and refuses bad flags with a one-line
//! message and exit code 2.

use std::process::Command;

fn respawn(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_respawn")).args(args).output().expect("the binary runs")
}

#[test]
fn a_tiny_storm_prints_both_scenarios() {
    let out = respawn(&["--frames", "5", "--rate", "50", "--seed", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("5 frames, 50 spawns a frame"), "{text}");
    assert!(text.contains("Vec<Box<Projectile>>") && text.contains("respawn Arena"), "{text}");
    assert!(text.contains("same storm, same result"), "{text}");
    // Both scenarios spawned 250 projectiles.
    for scenario in ["Vec<Box<Projectile>>", "respawn Arena"] {
        let row = text.lines().find(|l| l.starts_with(scenario)).unwrap();
        let spawned = row[scenario.len()..].split_whitespace().next().unwrap();
        assert_eq!(spawned, "250", "{row}");
    }
}

#[test]
fn bad_flags_get_a_clear_message_and_exit_code_2() {
    for (args, says) in [
        (&["--frames", "0"][..], "--frames must be at least 1"),
        (&["--rate", "-5"][..], "--rate takes a whole number"),
        (&["--bogus", "1"][..], "unknown flag --bogus"),
        (&["--frames"][..], "--frames needs a value"),
    ] {
        let out = respawn(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
