module.exports = ({ vars }) => `Say ${vars.sentence}`;
