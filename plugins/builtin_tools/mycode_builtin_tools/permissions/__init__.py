"""The default permission policy: rules, modes, command judgement."""
