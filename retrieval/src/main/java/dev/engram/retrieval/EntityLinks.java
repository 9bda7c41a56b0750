package dev.engram.retrieval;

import java.util.List;

/**
 * A snapshot's links between its entities and the passages, facts and relations that name them, as flat arrays per
 * node, without an object per link: a snapshot of 100k passages has millions.
 */
final class EntityLinks {

    private EntityLinks() {}

    /** Per passage, the entities it mentions (ascending), from each entity's passages. */
    static int[][] passageEntities(int[][] entityPassages, int passageCount) {
        Pairs byPassage = new Pairs();
        for (int e = 0; e < entityPassages.length; e++) {
            for (int p : entityPassages[e]) {
                byPassage.add(p, e);
            }
        }
        return byPassage.grouped(passageCount, entityPassages.length);
    }

    /** Per entity, the facts whose head or tail it is. */
    static int[][] entityFacts(List<MemoryGraph.Fact> facts, int entityCount) {
        Pairs ef = new Pairs();
        for (int f = 0; f < facts.size(); f++) {
            MemoryGraph.Fact fact = facts.get(f);
            if (fact.head() >= 0) {
                ef.add(fact.head(), f);
            }
            if (fact.tail() >= 0) {
                ef.add(fact.tail(), f);
            }
        }
        return ef.grouped(entityCount, facts.size());
    }

    /** Per entity, the relations (hyperedges) it is one of the entities of. */
    static int[][] entityRelations(List<MemoryGraph.Relation> relations, int entityCount) {
        Pairs er = new Pairs();
        for (int r = 0; r < relations.size(); r++) {
            for (int v : relations.get(r).entities()) {
                er.add(v, r);
            }
        }
        return er.grouped(entityCount, relations.size());
    }
}
