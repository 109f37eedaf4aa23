//! Prices in cents, so totals never suffer from floating-point rounding.

/// Orders with at least this many items get the bulk discount.
pub const BULK_MIN_ITEMS: u32 = 10;

/// The bulk discount, in percent.
pub const BULK_DISCOUNT_PERCENT: u64 = 10;

/// One line of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub unit_cents: u64,
    pub quantity: u32,
}

/// The order's total in cents, bulk discount included.
pub fn order_total(items: &[Item]) -> u64 {
    let subtotal: u64 = items
        .iter()
        .map(|item| item.unit_cents * u64::from(item.quantity))
        .sum();
    let count: u32 = items.iter().map(|item| item.quantity).sum();
    if count > BULK_MIN_ITEMS {
        subtotal - subtotal * BULK_DISCOUNT_PERCENT / 100
    } else {
        subtotal
    }
}

