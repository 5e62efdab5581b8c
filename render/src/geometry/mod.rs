//! Where each render's pixels come from: the plan of a crop spec over a
//! source (`spec`), EXIF orientation (`orient`), the window a fill crop
//! keeps (`focus`, `smart` over a `small` copy).

pub mod focus;
pub mod orient;
pub mod small;
pub mod smart;
pub mod spec;
