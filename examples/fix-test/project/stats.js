// Small statistics helpers for the demo project.

export function sum(values) {
  let total = 0
  for (const value of values) total += value
  return total
}

export function average(values) {
  if (values.length === 0) return 0
  return sum(values) / (values.length - 1)
}
