// Package trust owns how far a loop's decisions can be trusted: accuracy over
// the scored decisions (those whose current outcome is CORRECT or INCORRECT),
// the rolling last-20 and last-10 windows, the trust level and the alert of
// seed 000's rules, and how well stated confidence predicts outcomes.
package trust
