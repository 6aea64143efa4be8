"""Pure game logic for cardroom: cards, events, hand evaluation, betting, games.

Nothing here touches I/O, the clock or global randomness: everything random
enters as data (a seed inside an event).
"""
