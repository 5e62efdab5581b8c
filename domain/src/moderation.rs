//! Takedowns by administrators: whether a folder or a photo is taken down.

wire_enum! {
    /// sharingModerationDTO `state`.
    pub enum ModerationState {
        None = "none",
        TakenDown = "taken_down",
    }
}

/// A folder's or a photo's takedown, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Takedown {
    /// Unix ms when it started; `None` when not taken down.
    pub at: Option<i64>,
    pub reason: Option<String>,
}

impl Takedown {
    pub fn is_active(&self) -> bool {
        self.at.is_some()
    }

    pub fn state(&self) -> ModerationState {
        match self.at {
            Some(_) => ModerationState::TakenDown,
            None => ModerationState::None,
        }
    }
}
