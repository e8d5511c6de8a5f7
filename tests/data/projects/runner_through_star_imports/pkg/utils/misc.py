"""The run loop of an RL library: it calls the agent's step until the budget is spent."""


def run_steps(agent):
    config = agent.config
    while True:
        if config.max_steps and agent.total_steps >= config.max_steps:
            break
        agent.step()
