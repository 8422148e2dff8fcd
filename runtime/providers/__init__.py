"""Model providers behind one interface. The Anthropic provider is imported from
`runtime.providers.anthropic` where it is used: its SDK takes seconds to import, which a
process on the offline model (`make run`) or a command that never calls the model skips."""
