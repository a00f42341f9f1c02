export { type ObserveOptions, observeStore } from "./observed-store.js";
export { type BudgetMeterOptions, type SpendEvent, budgetMeter } from "./budget-meter.js";
